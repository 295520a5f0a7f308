/** internalCreateApiKey: POST /internal/v1/orgs/{org_id}/api-keys (API_CONTRACT §5, §9 api-keys, §15 scopes). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../../../../src/schemas/organization";
import { internal, request } from "../../../helpers/api";
import { type ErrorBody, TS } from "../../../helpers/expect";
import {
  createAccount,
  createCaller,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  scopedKey,
  unique,
} from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

type KeyRecord = ApiKeyRecord;

const KEY = /^dpk_[A-Za-z0-9_-]{43}$/;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("POST /internal/v1/orgs/{org_id}/api-keys", () => {
  it("issues a dpk_ key shown once and stores only its SHA-256 hash", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createAccount();
    await internal("POST", `/orgs/${org.id}/members`, { account_id: member.id, role: "member" });
    const res = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: member.id,
      created_by: owner.accountId,
      name: "ci",
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      key: expect.stringMatching(KEY),
      org_id: org.id,
      account_id: member.id,
      parent_id: null,
      created_by: owner.accountId,
      name: "ci",
      expires_at: null,
      scopes: ["*"],
      project_ids: null,
      last_used_at: null,
      created_at: expect.stringMatching(TS),
      oidc: null,
    });
    const row = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?")
      .bind(res.body.id)
      .first<Record<string, unknown>>();
    expect(row?.key_hash).toBe(await sha256Hex(res.body.key));
    for (const value of Object.values(row ?? {})) {
      if (typeof value === "string") expect(value).not.toContain(res.body.key.slice(4));
    }
    // The key acts as the member: it sees no project it is not a member of, and may not create one.
    const create = await request<ErrorBody>("POST", "/v1/projects", {
      key: res.body.key,
      body: { name: unique("p") },
    });
    expect([create.status, create.body.code]).toEqual([403, "unauthorized"]);
  });

  it("normalizes an expires_at with an offset to UTC with milliseconds", async () => {
    const { org, owner } = await createOrgWithOwner();
    const future = new Date(Date.now() + 86_400_000);
    const withOffset = `${new Date(future.getTime() + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const res = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
      expires_at: withOffset,
    });
    expect(res.status).toBe(201);
    expect(res.body.expires_at).toBe(`${future.toISOString().slice(0, 19)}.000Z`);
    // RFC 3339 §5.6: `t` and `z` may be lower case.
    const lower = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
      expires_at: future.toISOString().replace("T", "t").replace("Z", "z"),
    });
    expect(lower.status, lower.raw).toBe(201);
    expect(lower.body.expires_at).toBe(future.toISOString());
  });

  it.each([
    ["in the past", () => new Date(Date.now() - 60_000).toISOString()],
    ["now-ish (already passed by the time it is stored)", () => new Date(Date.now() - 1).toISOString()],
    ["not a date-time", () => "tomorrow"],
    ["a date without time", () => "2099-01-01"],
  ])("refuses an expires_at %s with 400 bad_input", async (_what, value) => {
    const { org, owner } = await createOrgWithOwner();
    const res = await internal<ErrorBody>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
      expires_at: value(),
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toEqual(["expires_at"]);
  });

  it("needs an org owner or admin as created_by, else 403 unauthorized", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const outsider = await createOrgWithOwner();
    const stranger = await createAccount();
    const byAdmin = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: member.accountId,
      created_by: admin.accountId,
    });
    expect(byAdmin.status).toBe(201);
    for (const createdBy of [member.accountId, outsider.owner.accountId, stranger.id]) {
      const res = await internal<ErrorBody>("POST", `/orgs/${org.id}/api-keys`, {
        account_id: member.accountId,
        created_by: createdBy,
      });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe("unauthorized");
    }
  });

  it("refuses an account that is not a member of the organization with 400 bad_input", async () => {
    const { org, owner } = await createOrgWithOwner();
    const other = await createOrgWithOwner();
    const loner = await createAccount();
    for (const accountId of [loner.id, other.owner.accountId]) {
      const res = await internal<ErrorBody>("POST", `/orgs/${org.id}/api-keys`, {
        account_id: accountId,
        created_by: owner.accountId,
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("bad_input");
      expect(res.body.cause?.map((c) => c.path)).toEqual(["account_id"]);
    }
  });

  it("an unknown organization is 404; bad bodies are 400", async () => {
    const { owner } = await createOrgWithOwner();
    const unknown = await internal<ErrorBody>("POST", "/orgs/0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c/api-keys", {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    for (const body of [
      {},
      { account_id: owner.accountId },
      { account_id: "nope", created_by: owner.accountId },
      { account_id: owner.accountId, created_by: owner.accountId, name: 101 },
      { account_id: owner.accountId, created_by: owner.accountId, scopes: [] },
    ]) {
      const res = await internal<ErrorBody>("POST", `/orgs/${owner.orgId}/api-keys`, body);
      expect([res.status, res.body.code], JSON.stringify(body)).toEqual([400, "bad_input"]);
    }
  });

  it("a new API key is marked no-store and carries the ETag a GET of the key then shows (API_CONTRACT §12)", async () => {
    const { org, owner } = await createProjectWithStack();
    const res = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
    const read = await request("GET", `/v1/api-keys/${res.body.id}`, { key: owner.key });
    expect(read.status).toBe(200);
    expect(res.headers.get("etag")).toBe(read.headers.get("etag"));
  });

  runInternalRouteTests("POST /internal/v1/orgs/{org_id}/api-keys", async () => {
    const { org, owner } = await createOrgWithOwner();
    return {
      method: "POST",
      path: `/internal/v1/orgs/${org.id}/api-keys`,
      body: { account_id: owner.accountId, created_by: owner.accountId },
    };
  });
});

describe("POST /internal/v1/orgs/{org_id}/api-keys with scopes and project_ids", () => {
  const SOME_ID = "7Hq3VnT5m2WcXbQ9pLk4Rz";

  it("stores them and shows them in the create answer and in GET /v1/api-keys/current", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const created = await scopedKey(owner, {
      name: "ci",
      scopes: ["deployments:write", "deployments:read", "deployments:read"],
      project_ids: [project.id, project.id],
    });
    expect(created.scopes).toEqual(["deployments:write", "deployments:read"]);
    expect(created.project_ids).toEqual([project.id]);
    expect(created).toMatchObject({ last_used_at: null, created_by: owner.accountId });

    const res = await request<Record<string, unknown>>("GET", "/v1/api-keys/current", { key: created.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: created.id,
      name: "ci",
      org_id: owner.orgId,
      account_id: owner.accountId,
      parent_id: null,
      scopes: ["deployments:write", "deployments:read"],
      project_ids: [project.id],
      expires_at: null,
      last_used_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      created_at: expect.any(String),
      oidc: null,
    });
    expect(res.raw).not.toContain(created.key.slice(4));
  });

  it("refuses bad scopes and projects that are not the organization's with 400, creating nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const other = await createOrgWithOwner();
    const foreign = await createProject(other.owner);
    const mine = await createProject(owner);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ scopes: [] }, "scopes"],
      [{ scopes: ["projects:admin"] }, "scopes.0"],
      [{ scopes: "*" }, "scopes"],
      [{ scopes: ["integrations:*"] }, "scopes.0"],
      [{ project_ids: [] }, "project_ids"],
      [{ project_ids: ["not an id"] }, "project_ids.0"],
      [{ project_ids: [mine.id, foreign.id] }, "project_ids.1"],
      [{ project_ids: [SOME_ID] }, "project_ids.0"],
      [{ project_ids: Array.from({ length: 101 }, () => mine.id) }, "project_ids"],
    ];
    // Every key of the organization, as its owner sees them (whichever database holds it).
    const keys = async () => {
      const res = await request<{ data: Array<{ id: string }> }>("GET", "/v1/api-keys", { key: owner.key });
      expect(res.status, res.raw).toBe(200);
      return res.body.data.map((k) => k.id).sort();
    };
    const before = await keys();
    expect(before).toEqual([owner.keyId]);
    for (const [extra, path] of cases) {
      const res = await internal<ErrorBody>("POST", `/orgs/${owner.orgId}/api-keys`, {
        account_id: owner.accountId,
        created_by: owner.accountId,
        ...extra,
      });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.code).toBe("bad_input");
      expect((res.body.cause ?? []).map((c) => c.path)).toContain(path);
    }
    expect(await keys()).toEqual(before);
    const ok = await scopedKey(owner, { project_ids: Array.from({ length: 100 }, () => mine.id) });
    expect(ok.project_ids).toEqual([mine.id]);
  });
});
