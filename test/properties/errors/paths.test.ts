/** Unknown paths and methods, and the x-request-id every response carries. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectErrorResponse, REQUEST_ID, raw } from "../../helpers/errors";
import { createOrgWithOwner, createProject } from "../../helpers/factories";

describe("unknown paths and methods", () => {
  it.each([
    ["/nothing"],
    ["/v2/projects"],
    ["/V1/projects"],
    ["/v1x/projects"],
    ["/internal"],
    ["/openapi.json/x"],
  ])("GET %s → 404 not_found", async (path) => {
    expectErrorResponse(await raw("GET", path), 404, "not_found");
  });

  it("unsupported methods outside /v1 are 404 not_found", async () => {
    for (const [method, path] of [
      ["POST", "/openapi.json"],
      ["DELETE", "/docs"],
      ["PUT", "/healthz"],
      ["POST", "/"],
    ] as const) {
      expectErrorResponse(await raw(method, path), 404, "not_found");
    }
  });

  it("unknown /v1 paths and unsupported methods on known paths are 404 not_found with a key", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    for (const [method, path] of [
      ["DELETE", "/v1/orgs"],
      ["PUT", "/v1/orgs"],
      ["PUT", "/v1/projects"],
      ["DELETE", "/v1/projects"],
      ["POST", `/v1/projects/${project.id}`],
      ["PATCH", `/v1/projects/${project.id}`],
      ["GET", `/v1/projects/${project.id}/disconnect`],
      ["GET", "/v1/nothing"],
      ["GET", "/v1/projects/"],
    ] as const) {
      const res = await request(method, path, { key: owner.key });
      expectErrorResponse(res, 404, "not_found");
    }
    // Nothing happened to the project.
    const still = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(still.body.connection_status).toBe("connected");
  });
});

describe("x-request-id", () => {
  it.each([["abc"], ["A.b_c:d-9"], ["x".repeat(128)], ["0"]])(
    "echoes a well-formed incoming id %s",
    async (id) => {
      const { owner } = await createOrgWithOwner();
      for (const res of [
        await request("GET", "/v1/orgs", { key: owner.key, headers: { "x-request-id": id } }),
        await raw("GET", "/v1/orgs", { headers: { "x-request-id": id } }),
        await raw("GET", "/nowhere", { headers: { "x-request-id": id } }),
        await raw("GET", "/openapi.json", { headers: { "x-request-id": id } }),
      ]) {
        expect(res.headers.get("x-request-id")).toBe(id);
      }
    },
  );

  it.each([["x".repeat(129)], ["has space"], ["slash/es"], ["é"], ["semi;colon"], ["a,b"], ["<script>"]])(
    "replaces a malformed incoming id %j",
    async (id) => {
      const res = await raw("GET", "/nowhere", { headers: { "x-request-id": id } });
      const echoed = res.headers.get("x-request-id");
      expect(echoed).toMatch(REQUEST_ID);
      expect(echoed).not.toBe(id);
    },
  );

  it("makes a fresh id for every response that brings none, success or failure", async () => {
    const { owner } = await createOrgWithOwner();
    const responses = [
      await request("GET", "/v1/orgs", { key: owner.key }),
      await request("GET", "/v1/orgs", { key: owner.key }),
      await request("POST", "/v1/projects", { key: owner.key, body: { bad: 1 } }),
      await raw("GET", "/v1/orgs", {}),
      await raw("GET", "/nowhere"),
      await raw("GET", "/healthz"),
      await raw("POST", "/internal/v1/orgs", { body: "{}" }),
    ];
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
