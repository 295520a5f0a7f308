/** API keys and authentication (API_CONTRACT §5, §9 api-keys, §10). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../src/schemas/organization";
import { type ApiResponse, internal, request } from "./helpers/api";
import { type ErrorBody, TS } from "./helpers/expect";
import { createAccount, createCaller, createOrgWithOwner, revokeKey, unique } from "./helpers/factories";

type KeyRecord = ApiKeyRecord;
type ApiKeyRow = {
  id: string;
  key_hash: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
};

const KEY = /^dpk_[A-Za-z0-9_-]{43}$/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectUnauthenticated(res: ApiResponse<unknown>) {
  expect(res.status, res.raw).toBe(401);
  expect((res.body as ErrorBody).code).toBe("unauthenticated");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  // RFC 9110 §11.6.1: a 401 carries the challenge of the scheme that would authenticate.
  expect(res.headers.get("www-authenticate")).toBe('ApiKey realm="deploy-platform-api", header="x-api-key"');
}

async function keyRow(id: string): Promise<ApiKeyRow | null> {
  return env.DB.prepare(
    "SELECT id, key_hash, last_used_at, revoked_at, expires_at FROM api_keys WHERE id = ?",
  )
    .bind(id)
    .first<ApiKeyRow>();
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("x-api-key", () => {
  it("authenticates under any letter case of the header name", async () => {
    const { org, owner } = await createOrgWithOwner();
    for (const name of ["x-api-key", "X-API-KEY", "X-Api-Key", "x-API-key", "X-api-KEY"]) {
      const res = await request<{ data: Array<{ id: string }> }>("GET", "/v1/orgs", {
        headers: { [name]: owner.key },
      });
      expect(res.status, name).toBe(200);
      expect(res.body.data.map((o) => o.id)).toEqual([org.id]);
    }
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["without the prefix", "A".repeat(47)],
    ["too short", `dpk_${"A".repeat(42)}`],
    ["too long", `dpk_${"A".repeat(44)}`],
    ["with a bad character", `dpk_${"A".repeat(42)}=`],
    ["sent as a bearer value", `Bearer dpk_${"A".repeat(43)}`],
    ["unknown", `dpk_${"A".repeat(43)}`],
  ])("a %s key is 401 unauthenticated", async (_what, key) => {
    const headers: Record<string, string> = {};
    if (key !== undefined) headers["x-api-key"] = key;
    expectUnauthenticated(await request("GET", "/v1/projects", { headers }));
  });

  it("keys are case-sensitive, and a key is not accepted as a bearer token", async () => {
    const { owner } = await createOrgWithOwner();
    const flipped = owner.key.replace(/[a-z]/, (c) => c.toUpperCase());
    if (flipped !== owner.key) {
      expectUnauthenticated(await request("GET", "/v1/orgs", { key: flipped }));
    }
    expectUnauthenticated(
      await request("GET", "/v1/orgs", {
        headers: { authorization: `Bearer ${owner.key}` },
      }),
    );
    expectUnauthenticated(await request("GET", "/v1/orgs", { key: ` ${owner.key}x` }));
  });
});

describe("revocation and expiry", () => {
  it("a revoked key is refused at once, even after it was cached by use", async () => {
    const { owner } = await createOrgWithOwner();
    for (let i = 0; i < 3; i++) {
      expect((await request("GET", "/v1/projects", { key: owner.key })).status).toBe(200);
    }
    await revokeKey(owner.keyId);
    expectUnauthenticated(await request("GET", "/v1/projects", { key: owner.key }));
    const row = await keyRow(owner.keyId);
    expect(row?.revoked_at).toMatch(TS);
    // Revoking again is harmless; another key of the same account still works.
    expect((await internal("DELETE", `/api-keys/${owner.keyId}`)).status).toBe(204);
    const other = await internal<KeyRecord>("POST", `/orgs/${owner.orgId}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect((await request("GET", "/v1/projects", { key: other.body.key })).status).toBe(200);
  });

  it("a key is refused once its expires_at has passed, even after it was cached by use", async () => {
    const { org, owner } = await createOrgWithOwner();
    const expiresAt = new Date(Date.now() + 2_000).toISOString();
    const created = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
      expires_at: expiresAt,
    });
    expect(created.status).toBe(201);
    expect(created.body.expires_at).toBe(expiresAt);
    expect((await request("GET", "/v1/projects", { key: created.body.key })).status).toBe(200);
    // A bounded wait past the expiry (no assertion on how long anything takes).
    while (Date.now() <= Date.parse(expiresAt) + 50) await sleep(100);
    expectUnauthenticated(
      await request("GET", "/v1/projects", {
        key: created.body.key,
      }),
    );
    expect((await request("GET", "/v1/projects", { key: owner.key })).status).toBe(200);
  });

  it("a key whose account left the organization (no public route does this yet) is refused", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createAccount();
    await internal("POST", `/orgs/${org.id}/members`, { account_id: member.id, role: "member" });
    const key = await internal<KeyRecord>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: member.id,
      created_by: owner.accountId,
    });
    // Removed straight in D1, before the key was ever used (so no isolate has it cached).
    await env.DB.prepare("DELETE FROM org_members WHERE org_id = ? AND account_id = ?")
      .bind(org.id, member.id)
      .run();
    expectUnauthenticated(await request("GET", "/v1/orgs", { key: key.body.key }));
  });

  it("records last_used_at when a key is used", async () => {
    const { owner } = await createOrgWithOwner();
    expect((await keyRow(owner.keyId))?.last_used_at).toBeNull();
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
    // The write is kept alive with waitUntil and may land just after the response.
    let row = await keyRow(owner.keyId);
    for (let i = 0; i < 50 && !row?.last_used_at; i++) {
      await sleep(20);
      row = await keyRow(owner.keyId);
    }
    expect(row?.last_used_at).toMatch(TS);
  });
});

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
      created_by: owner.accountId,
      name: "ci",
      expires_at: null,
      scopes: ["*"],
      project_ids: null,
      last_used_at: null,
      created_at: expect.stringMatching(TS),
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

  it("revoking an unknown key is 404", async () => {
    const res = await internal<ErrorBody>("DELETE", "/api-keys/1111111111111111111111");
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    const bad = await internal<ErrorBody>("DELETE", "/api-keys/not-an-id");
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });
});
