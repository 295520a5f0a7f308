/** createApiKey: POST /v1/api-keys, a key that makes a narrower key (API_CONTRACT §21). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ApiKeyInfo, NewApiKeyRecord } from "../../../src/schemas/organization";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { type ErrorBody, expectError, NEW_ID, TS } from "../../helpers/expect";
import {
  type Caller,
  createApiKey,
  createCaller,
  createOrgWithOwner,
  createProject,
  deriveKey,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const KEY = /^dpk_[A-Za-z0-9_-]{43}$/;
const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();
const inTwoHours = () => new Date(Date.now() + 7_200_000).toISOString();

const create = (caller: Caller, body?: unknown, headers: Record<string, string> = {}) =>
  request<NewApiKeyRecord & ErrorBody>("POST", "/v1/api-keys", { key: caller.key, body, headers });

/** How many keys the organization holds: a refused create makes none. */
async function keyCount(orgId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE org_id = ?")
    .bind(orgId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

describe("POST /v1/api-keys", () => {
  it("makes a key acting as the caller's account, with the caller's powers and parent_id; the key only in this no-store answer", async () => {
    const { org, owner } = await createOrgWithOwner();
    const res = await create(owner, { name: "ci storefront" });
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      name: "ci storefront",
      org_id: org.id,
      account_id: owner.accountId,
      parent_id: owner.keyId,
      scopes: ["*"],
      project_ids: null,
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
      created_at: expect.stringMatching(TS),
      oidc: null,
      key: expect.stringMatching(KEY),
    });
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("location")).toBe(`/v1/api-keys/${res.body.id}`);

    const { key, ...record } = res.body;
    const read = await request<ApiKeyInfo>("GET", `/v1/api-keys/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual(record);
    // API_CONTRACT §12: a 201 carries the new record's ETag, the one a GET shows (never of the key).
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    expect(res.headers.get("etag")).toBe(read.headers.get("etag"));
    expect(read.raw).not.toContain(key.slice(4));
    const current = await request<Record<string, unknown>>("GET", "/v1/api-keys/current", { key });
    expect(current.status).toBe(200);
    expect(current.body).toMatchObject({
      id: res.body.id,
      parent_id: owner.keyId,
      account_id: owner.accountId,
    });
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
      .bind(res.body.id)
      .first<Record<string, unknown>>();
    expect(Object.values(row ?? {}).join(" ")).not.toContain(key.slice(4));
    expect(row?.created_by).toBe(owner.accountId);
  });

  it("an empty body, no body at all and explicit nulls: the caller's own powers (null: no restriction, no expiry)", async () => {
    const { owner } = await createOrgWithOwner();
    for (const body of [undefined, {}, { name: null, scopes: null, project_ids: null, expires_at: null }]) {
      const res = await create(owner, body);
      expect(res.status, res.raw).toBe(201);
      expect(res.body).toMatchObject({ name: null, scopes: ["*"], project_ids: null, expires_at: null });
    }
  });

  it("left-out fields are the calling key's own: its scopes, its projects, its expiry", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const expiresAt = inAnHour();
    const narrow = await createApiKey(owner, {
      scopes: ["deployments:read", "deployments:write", "api-keys:write"],
      project_ids: [project.id],
      expires_at: expiresAt,
    });
    const res = await create(narrow, {});
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toMatchObject({
      parent_id: narrow.keyId,
      scopes: ["deployments:read", "deployments:write", "api-keys:write"],
      project_ids: [project.id],
      expires_at: expiresAt,
    });
  });

  it("takes narrower scopes, projects and expiry, and the new key can do only that", async () => {
    const { owner } = await createOrgWithOwner();
    const [a, b] = [await createProject(owner), await createProject(owner)];
    const expiresAt = inAnHour();
    const child = await deriveKey(owner, {
      scopes: ["projects:read", "projects:read"],
      project_ids: [a.id, a.id],
      expires_at: expiresAt,
    });
    expect(child.record).toMatchObject({
      scopes: ["projects:read"],
      project_ids: [a.id],
      expires_at: expiresAt,
    });
    const projects = await request<{ data: Array<{ id: string }> }>("GET", "/v1/projects", {
      key: child.key,
    });
    expect(projects.body.data.map((p) => p.id)).toEqual([a.id]);
    expect((await request("GET", `/v1/projects/${b.id}`, { key: child.key })).status).toBe(404);
    expectError(await request("DELETE", `/v1/projects/${a.id}`, { key: child.key }), 403, "forbidden");
  });

  it("keys make keys at any depth: each records the key that made it", async () => {
    const { owner } = await createOrgWithOwner();
    const child = await deriveKey(owner, { scopes: ["api-keys:write", "projects:read"] });
    const grandchild = await deriveKey(child, { scopes: ["projects:read"] });
    expect(grandchild.record.parent_id).toBe(child.keyId);
    expect(child.record.parent_id).toBe(owner.keyId);
    // Without `api-keys:write` a key cannot make keys at all: §15's scope check.
    const refused = await create(grandchild, {});
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("`api-keys:write`");
  });

  describe("exceeding the calling key: 403 forbidden, one cause per field, nothing made", () => {
    const refusedWith = async (caller: Caller, body: unknown, paths: string[]) => {
      const before = await keyCount(caller.orgId);
      const res = await create(caller, body);
      expectError(res, 403, "forbidden");
      expect(res.body.cause?.map((c) => c.path)).toEqual(paths);
      for (const cause of res.body.cause ?? []) expect(cause.message.length).toBeGreaterThan(0);
      expect(await keyCount(caller.orgId)).toBe(before);
    };

    it("a scope the caller lacks, and `*` from a key without it (even one listing every scope)", async () => {
      const { owner } = await createOrgWithOwner();
      const narrow = await createApiKey(owner, { scopes: ["api-keys:write", "deployments:read"] });
      await refusedWith(narrow, { scopes: ["deployments:read", "deployments:write"] }, ["scopes"]);
      await refusedWith(narrow, { scopes: ["*"] }, ["scopes"]);
      const { SCOPES } = await import("../../../src/http/scopes");
      const every = await createApiKey(owner, { scopes: SCOPES.filter((s) => s !== "*") });
      await refusedWith(every, { scopes: ["*"] }, ["scopes"]);
      expect((await create(every, { scopes: ["orgs:read"] })).status).toBe(201);
    });

    it("a project outside the caller's, or no restriction from a restricted caller", async () => {
      const { owner } = await createOrgWithOwner();
      const [a, b] = [await createProject(owner), await createProject(owner)];
      const restricted = await createApiKey(owner, { project_ids: [a.id] });
      await refusedWith(restricted, { project_ids: [a.id, b.id] }, ["project_ids"]);
      await refusedWith(restricted, { project_ids: null }, ["project_ids"]);
      // A project of another organization is refused as exceeding too: a restricted key learns
      // nothing of projects outside its own.
      const { owner: stranger } = await createOrgWithOwner();
      await refusedWith(restricted, { project_ids: [(await createProject(stranger)).id] }, ["project_ids"]);
    });

    it("an expiry later than the caller's, or none under a caller that expires", async () => {
      const { owner } = await createOrgWithOwner();
      const expiring = await createApiKey(owner, { expires_at: inAnHour() });
      await refusedWith(expiring, { expires_at: inTwoHours() }, ["expires_at"]);
      await refusedWith(expiring, { expires_at: null }, ["expires_at"]);
      const ok = await create(expiring, { expires_at: expiring.record.expires_at });
      expect(ok.status, ok.raw).toBe(201);
    });

    it("every field at once: three causes", async () => {
      const { owner } = await createOrgWithOwner();
      const a = await createProject(owner);
      const narrow = await createApiKey(owner, {
        scopes: ["api-keys:write"],
        project_ids: [a.id],
        expires_at: inAnHour(),
      });
      await refusedWith(narrow, { scopes: ["*"], project_ids: null, expires_at: inTwoHours() }, [
        "scopes",
        "project_ids",
        "expires_at",
      ]);
    });
  });

  describe("bad input: 400, nothing made", () => {
    // One organization serves every case: each refusal leaves it as it was.
    let shared: ReturnType<typeof createOrgWithOwner> | undefined;
    it.each([
      ["an unknown scope", { scopes: ["deployments:delete"] }, "scopes.0"],
      ["no scopes", { scopes: [] }, "scopes"],
      ["an expiry in the past", { expires_at: "2020-01-01T00:00:00Z" }, "expires_at"],
      ["an expiry that is no date", { expires_at: "tomorrow" }, "expires_at"],
      ["an empty name", { name: "" }, "name"],
      ["a name over 100 characters", { name: "n".repeat(101) }, "name"],
      ["an unknown field", { account_id: "7Hq3VnT5m2WcXbQ9pLk4Rz" }, "account_id"],
      ["no project", { project_ids: [] }, "project_ids"],
      ["a project ID that fits no form", { project_ids: ["nope"] }, "project_ids.0"],
      [
        "over 100 projects",
        { project_ids: Array.from({ length: 101 }, () => "7Hq3VnT5m2WcXbQ9pLk4Rz") },
        "project_ids",
      ],
    ])("%s", async (_what, body, path) => {
      shared ??= createOrgWithOwner();
      const { org, owner } = await shared;
      const before = await keyCount(org.id);
      expectError(await create(owner, body), 400, "bad_input", path);
      expect(await keyCount(org.id)).toBe(before);
    });

    it("a name of exactly 100 characters is fine", async () => {
      const { owner } = await createOrgWithOwner();
      expect((await create(owner, { name: "n".repeat(100) })).status).toBe(201);
    });

    it("a project that is not the organization's, named by an unrestricted key", async () => {
      const { org, owner } = await createOrgWithOwner();
      const mine = await createProject(owner);
      const { owner: stranger } = await createOrgWithOwner();
      const foreign = await createProject(stranger);
      const before = await keyCount(org.id);
      const res = await create(owner, { project_ids: [mine.id, foreign.id] });
      expectError(res, 400, "bad_input");
      expect(res.body.cause?.map((c) => c.path)).toEqual(["project_ids.1"]);
      expect(await keyCount(org.id)).toBe(before);
    });
  });

  it("organization owners and admins make keys; members are 403 unauthorized", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    expect((await create(admin, {})).body).toMatchObject({
      account_id: admin.accountId,
      parent_id: admin.keyId,
    });
    const before = await keyCount(org.id);
    expectError(await create(member, {}), 403, "unauthorized");
    expect(await keyCount(org.id)).toBe(before);
  });

  it("writes one audit entry, createApiKey, without the key", async () => {
    const { owner } = await createOrgWithOwner();
    const requestId = `create-key-${crypto.randomUUID()}`;
    const res = await create(owner, { scopes: ["projects:read"] }, { "x-request-id": requestId });
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: "createApiKey", target_type: "api_key", target_id: res.body.id });
    const changes = JSON.parse(rows[0]?.changes as string) as Record<string, { to: unknown }>;
    expect(changes.parent_id?.to).toBe(owner.keyId);
    expect(changes.scopes?.to).toEqual(["projects:read"]);
    expect(JSON.stringify(rows[0])).not.toContain(res.body.key.slice(4));
  });

  runCommonRouteTests(
    "POST /v1/api-keys",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "POST", path: "/v1/api-keys", body: {}, caller: owner };
    },
    // Another organization's owner makes a key in its own organization.
    { otherOrgStatus: 201 },
  );
});
