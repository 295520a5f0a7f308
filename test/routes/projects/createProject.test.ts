/** createProject. */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import {
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
  unique,
} from "../../helpers/factories";
import { type ProjectBody, type ProjectPage, projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

describe("POST /v1/projects", () => {
  it("creates a connected project with a production environment, caller as owner", async () => {
    const { org, owner } = await createOrgWithOwner();
    const res = await request<ProjectBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "Storefront", description: "shop", icon: "emoji:🚀" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      org_id: org.id,
      name: "Storefront",
      description: "shop",
      icon: "emoji:🚀",
      repo_id: null,
      default_environment_id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      connection_status: "connected",
      created_at: expect.stringMatching(TS),
      updated_at: res.body.created_at,
    });
    const envRow = await env.DB.prepare("SELECT name, project_id FROM environments WHERE id = ?")
      .bind(res.body.default_environment_id)
      .first<{ name: string; project_id: string }>();
    expect(envRow).toEqual({ name: "production", project_id: res.body.id });
    const members = await request<{ data: Array<{ account_id: string; role: string }> }>(
      "GET",
      `/v1/projects/${res.body.id}/members`,
      { key: owner.key },
    );
    expect(members.status).toBe(200);
    expect(members.body.data).toEqual([
      expect.objectContaining({ account_id: owner.accountId, role: "owner" }),
    ]);
  });

  it("accepts every identifier form for repo_id and every icon kind", async () => {
    const { owner } = await createOrgWithOwner();
    for (const [repo_id, icon] of [
      ["7Hq3VnT5m2WcXbQ9pLk4Rz", "icon:box"],
      ["0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c", "emoji:🚀"],
      ["0123456789abcdef0123456789abcdef", "url:https://example.com/i.png"],
      [null, null],
    ]) {
      const res = await request<ProjectBody>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: unique("p"), repo_id, icon },
      });
      expect(res.status).toBe(201);
      expect([res.body.repo_id, res.body.icon]).toEqual([repo_id, icon]);
    }
  });

  it("refuses a duplicate name regardless of case with 409, and frees it after delete", async () => {
    const { owner } = await createOrgWithOwner();
    const first = await createProject(owner, { name: "Api" });
    const dup = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body: { name: "aPI" } });
    expect([dup.status, dup.body.code]).toEqual([409, "conflict"]);
    expect((await request("DELETE", `/v1/projects/${first.id}`, { key: owner.key })).status).toBe(204);
    expect((await request("POST", "/v1/projects", { key: owner.key, body: { name: "API" } })).status).toBe(
      201,
    );
  });

  it("compares names Unicode-aware: letter case beyond ASCII and normalization forms", async () => {
    const { owner } = await createOrgWithOwner();
    await createProject(owner, { name: "Ärger" });
    await createProject(owner, { name: "caf\u00e9" });
    for (const name of ["äRGER", "cafe\u0301", "CAF\u00c9"]) {
      const res = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body: { name } });
      expect([res.status, res.body.code], name).toEqual([409, "conflict"]);
    }
  });

  it("the same name is fine in another organization", async () => {
    const a = await createOrgWithOwner();
    const b = await createOrgWithOwner();
    const first = await createProject(a.owner, { name: "shared" });
    const second = await createProject(b.owner, { name: "shared" });
    expect([first.name, second.name]).toEqual(["shared", "shared"]);
    expect([first.org_id, second.org_id]).toEqual([a.org.id, b.org.id]);
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ name: "ok", icon: "rocket" }, "icon"],
    [{ name: "ok", icon: "emoji:" }, "icon"],
    [{ name: "ok", repo_id: "not an id" }, "repo_id"],
    [{ name: "ok", repo_id: "0B9F6A3C-1D2E-4F5A-8B7C-9D0E1F2A3B4C" }, "repo_id"],
    [{ name: "ok", description: "d".repeat(1001) }, "description"],
    [{ name: "ok", extra: 1 }, "extra"],
    [{ name: "ok", connection_status: "disconnected" }, "connection_status"],
    [{ name: 5 }, "name"],
  ])("refuses %j with bad_input naming %s", async (body, field) => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(field);
  });

  it("refuses non-JSON bodies, wrong content types, oversized and empty bodies, creating nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const notJson = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: "{nope",
      headers: { "content-type": "application/json" },
    });
    expect([notJson.status, notJson.body.code]).toEqual([400, "bad_input"]);
    const wrongType = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: JSON.stringify({ name: "x" }),
      headers: { "content-type": "text/plain" },
    });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, "bad_input"]);
    const big = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "x", description: "y".repeat(1024 * 1024 + 10) },
    });
    expect([big.status, big.body.code]).toEqual([400, "bad_input"]);
    const empty = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key });
    expect([empty.status, empty.body.code]).toEqual([400, "bad_input"]);
    const list = await request<ProjectPage>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toEqual([]);
  });

  it("needs org owner or admin: a member is 403 unauthorized, even a project owner elsewhere", async () => {
    const { org, owner, project } = await createOwnedProject();
    const admin = await createCaller(org, "admin");
    const member = await projectCaller(org, owner, project, "owner");
    const byAdmin = await request<ProjectBody>("POST", "/v1/projects", {
      key: admin.key,
      body: { name: unique("p") },
    });
    expect(byAdmin.status).toBe(201);
    const res = await request<ErrorBody>("POST", "/v1/projects", { key: member.key, body: { name: "p" } });
    expect([res.status, res.body.code]).toEqual([403, "unauthorized"]);
  });

  runCommonRouteTests(
    "POST /v1/projects",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "POST", path: "/v1/projects", body: { name: unique("p") }, caller: owner };
    },
    { otherOrgStatus: 201 },
  );
});

describe("free text", () => {
  const LONE = "\uD800";
  it("refuses an unpaired surrogate in a project name or description, at its path; accepts a pair", async () => {
    const { owner } = await createOrgWithOwner();
    for (const [field, body] of [
      ["name", { name: `bad${LONE}` }],
      ["name", { name: `bad\uDC00x` }],
      ["description", { name: unique("p"), description: `x${LONE}` }],
    ] as const) {
      const res = await request("POST", "/v1/projects", { key: owner.key, body });
      expect(res.status, res.raw).toBe(400);
      expect(res.body).toMatchObject({ code: "bad_input", cause: [{ path: field }] });
    }
    const list = await request<{ data: unknown[] }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toEqual([]);
    const ok = await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("🚀") } });
    expect(ok.status, ok.raw).toBe(201);
  });
});
