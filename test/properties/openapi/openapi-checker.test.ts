/**
 * The response checker of the test helpers (test/helpers/openapi.ts): what it accepts and
 * refuses, and that `request` runs it on every answer of a documented operation.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import { createOrgWithOwner } from "../../helpers/factories";
import { expectDocumentedResponse, expectMatchesOpenApi, pathTemplateOf } from "../../helpers/openapi";

describe("the response checker (test/helpers/openapi.ts)", () => {
  const project = {
    id: "7Hq3VnT5m2WcXbQ9pLk4Rz",
    org_id: "7Hq3VnT5m2WcXbQ9pLk4Ry",
    name: "p",
    description: null,
    icon: "emoji:x",
    repo_id: null,
    default_environment_id: "7Hq3VnT5m2WcXbQ9pLk4Rx",
    connection_status: "connected",
    created_at: "2026-11-22T10:04:05.123Z",
    updated_at: "2026-11-22T10:04:05.123Z",
  };

  it("accepts a record that matches, and the envelope around it", async () => {
    await expectMatchesOpenApi("GET", "/v1/projects/{project_id}", 200, project);
    await expectMatchesOpenApi("GET", "/v1/projects", 200, { data: [project], has_more: false });
    await expectMatchesOpenApi("GET", "/v1/projects", 200, {
      data: [project],
      has_more: true,
      next_page: "eyJ2IjoxfQ==",
    });
    await expectMatchesOpenApi("DELETE", "/v1/projects/{project_id}", 204, null);
    await expectMatchesOpenApi("GET", "/v1/projects", 400, { code: "bad_input", message: "m", cause: [] });
  });

  it.each([
    ["an extra field", { ...project, secret: 1 }],
    ["a missing field", { ...project, description: undefined }],
    ["a value outside the enum", { ...project, connection_status: "gone" }],
    ["a broken pattern", { ...project, icon: "rocket" }],
    ["a bad id", { ...project, id: "0OIl" }],
    ["a bad date-time", { ...project, created_at: "yesterday" }],
    ["a date-time without milliseconds", { ...project, created_at: "2026-11-22T10:04:05Z" }],
    ["a date-time with an offset", { ...project, updated_at: "2026-11-22T10:04:05.123+01:00" }],
    ["null where null is not allowed", { ...project, name: null }],
  ])("refuses %s", async (_what, body) => {
    await expect(expectMatchesOpenApi("GET", "/v1/projects/{project_id}", 200, body)).rejects.toThrow(
      /does not match/,
    );
  });

  it("refuses envelopes and errors that break the document, undeclared statuses and bodies on 204", async () => {
    const bad = [
      { data: [project] },
      { data: [project], has_more: true, next_page: "not base64!" },
      { data: [{ ...project, id: 5 }], has_more: false },
    ];
    for (const body of bad) {
      await expect(expectMatchesOpenApi("GET", "/v1/projects", 200, body)).rejects.toThrow(/does not match/);
    }
    await expect(
      expectMatchesOpenApi("GET", "/v1/projects", 400, { code: "oops", message: "m" }),
    ).rejects.toThrow(/does not match/);
    await expect(expectMatchesOpenApi("GET", "/v1/projects", 418, {})).rejects.toThrow(/does not declare/);
    await expect(expectMatchesOpenApi("DELETE", "/v1/projects/{project_id}", 204, {})).rejects.toThrow(
      /without content/,
    );
    await expect(expectMatchesOpenApi("GET", "/v1/nothing", 200, {})).rejects.toThrow(/not in/);
  });

  it("finds the path template of a concrete path, literal segments first", async () => {
    expect(await pathTemplateOf("GET", "/v1/projects?limit=2")).toBe("/v1/projects");
    expect(await pathTemplateOf("GET", "/v1/projects/7Hq3VnT5m2WcXbQ9pLk4Rz")).toBe(
      "/v1/projects/{project_id}",
    );
    expect(await pathTemplateOf("GET", "/v1/orgs/abc/projects")).toBe("/v1/orgs/{org_id}/projects");
    expect(await pathTemplateOf("PATCH", "/v1/projects/abc/disconnect")).toBe(
      "/v1/projects/{project_id}/disconnect",
    );
    expect(await pathTemplateOf("GET", "/v1/projects/abc/nothing")).toBeUndefined();
  });
});

describe("request checks every answer of a documented operation", () => {
  const json = (body: unknown, status = 200) => ({
    status,
    body,
    raw: JSON.stringify(body),
    headers: new Headers({ "content-type": "application/json" }),
  });

  it("refuses a body off the schema, an undeclared status and a body that is not JSON", async () => {
    await expect(expectDocumentedResponse("GET", "/v1/projects", json({ data: 1 }))).rejects.toThrow(
      /does not match/,
    );
    await expect(expectDocumentedResponse("GET", "/v1/projects", json({}, 418))).rejects.toThrow(
      /does not declare/,
    );
    const text = {
      status: 200,
      body: "hi",
      raw: "hi",
      headers: new Headers({ "content-type": "text/plain" }),
    };
    await expect(expectDocumentedResponse("GET", "/v1/projects?limit=1", text)).rejects.toThrow(
      /content-type text\/plain/,
    );
  });

  it("leaves alone what is no operation of the document", async () => {
    const anything = {
      status: 418,
      body: "x",
      raw: "x",
      headers: new Headers({ "content-type": "text/plain" }),
    };
    for (const [method, path] of [
      ["GET", "/v1/nothing"],
      ["GET", "/openapi.json"],
      ["GET", "/docs"],
      ["POST", "/internal/v1/orgs"],
      ["PUT", "/v1/orgs"],
    ]) {
      await expect(
        expectDocumentedResponse(method as string, path as string, anything),
      ).resolves.toBeUndefined();
    }
  });

  it("fails a real answer that breaks the document, unless the request opts out", async () => {
    const { org, owner } = await createOrgWithOwner();
    // An entry whose ID breaks the published ID pattern, written past the API.
    await env.DB.prepare(
      "INSERT INTO audit_log (id, org_id, project_id, action, target_type, target_id, actor_type, request_id, created_at) VALUES (?, ?, NULL, 'test', 'x', 'x', 'admin', 'r', ?)",
    )
      .bind(`bad-${newId()}`, org.id, new Date().toISOString())
      .run();
    const path = `/v1/orgs/${org.id}/audit-log?action=test`;
    await expect(request("GET", path, { key: owner.key })).rejects.toThrow(/data\[0\]\.id/);
    // Deliberately outside the document: the row above was written around the API.
    const unchecked = await request("GET", path, { key: owner.key, unchecked: true });
    expect(unchecked.status).toBe(200);
  });
});
