/**
 * API keys and authentication on every /v1 route (API_CONTRACT §5, §10): the x-api-key header,
 * revocation and expiry (even of a key an isolate has cached), and the last-use mark.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import type { ApiKeyRecord } from "../../src/schemas/organization";
import { type ApiResponse, internal, request } from "../helpers/api";
import { createOrgWithOwnerIn, d1, ORG_DATABASES, type OrgDatabase } from "../helpers/databases";
import { type ErrorBody, TS } from "../helpers/expect";
import { createAccount, createOrgWithOwner, revokeKey } from "../helpers/factories";
import { sleep } from "../helpers/wait";

type KeyRecord = ApiKeyRecord;
type ApiKeyRow = {
  id: string;
  key_hash: string;
  last_used_at: string | null;
  revoked_at: string | null;
  expires_at: string | null;
};

function expectUnauthenticated(res: ApiResponse<unknown>) {
  expect(res.status, res.raw).toBe(401);
  expect((res.body as ErrorBody).code).toBe("unauthenticated");
  expect(res.headers.get("x-request-id")).toBeTruthy();
  // RFC 9110 §11.6.1: a 401 carries the challenge of the scheme that would authenticate.
  expect(res.headers.get("www-authenticate")).toBe('ApiKey realm="deploy-platform-api", header="x-api-key"');
}

async function keyRow(id: string, database: OrgDatabase = "DB"): Promise<ApiKeyRow | null> {
  return d1(database)
    .prepare("SELECT id, key_hash, last_used_at, revoked_at, expires_at FROM api_keys WHERE id = ?")
    .bind(id)
    .first<ApiKeyRow>();
}

describe("x-api-key", () => {
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
    // One letter of the secret part in the other case (the `dpk_` prefix stays as it is: a key
    // without it is refused for its shape, before its secret is looked at).
    const at = owner.key.slice(4).search(/[A-Za-z]/) + 4;
    expect(at).toBeGreaterThanOrEqual(4);
    const letter = owner.key[at] as string;
    const other = letter === letter.toLowerCase() ? letter.toUpperCase() : letter.toLowerCase();
    const flipped = `${owner.key.slice(0, at)}${other}${owner.key.slice(at + 1)}`;
    expect(
      flipped.startsWith("dpk_") &&
        flipped !== owner.key &&
        flipped.toLowerCase() === owner.key.toLowerCase(),
    ).toBe(true);
    expectUnauthenticated(await request("GET", "/v1/orgs", { key: flipped }));
    // The key itself still works: the refusal above is its flipped letter's.
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
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
    // The first use after a quiet spell is written by its own request, in its waitUntil work.
    let row = await keyRow(owner.keyId);
    for (let i = 0; i < 50 && !row?.last_used_at; i++) {
      await sleep(20);
      row = await keyRow(owner.keyId);
    }
    expect(row?.last_used_at).toMatch(TS);
  });

  it("never moves last_used_at backwards: the first use's write leaves a later one recorded", async () => {
    const { owner } = await createOrgWithOwner();
    // As if another write of the key's use, made later, had finished first.
    const later = new Date(Date.now() + 3600_000).toISOString();
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(later, owner.keyId).run();
    // `bindings`: the request's waitUntil work, its first-use write, is done before it returns.
    expect((await request("GET", "/v1/orgs", { key: owner.key, bindings: {} })).status).toBe(200);
    expect((await keyRow(owner.keyId))?.last_used_at).toBe(later);
  });

  // In the key's own organization database (src/db/databases.ts), which its limiter object keeps.
  it.each(ORG_DATABASES)(
    "writes last_used_at at most once per interval per key, then the latest use: no request writes it (%s)",
    async (database) => {
      const { owner } = await createOrgWithOwnerIn(database);
      const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${owner.keyId}`));
      expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
      let first = await keyRow(owner.keyId, database);
      for (let i = 0; i < 50 && !first?.last_used_at; i++) {
        await sleep(20);
        first = await keyRow(owner.keyId, database);
      }
      expect(first?.last_used_at).toMatch(TS);

      // Used again within the interval: nothing is written; the use waits in the object.
      await sleep(5);
      const before = Date.now();
      await Promise.all([1, 2, 3].map(() => request("GET", "/v1/orgs", { key: owner.key })));
      await sleep(200);
      expect((await keyRow(owner.keyId, database))?.last_used_at).toBe(first?.last_used_at);
      const pending = await runInDurableObject(limiter, (_object: RateLimiter, state) =>
        state.storage.sql
          .exec<{ due_at: number; written_at: number }>("SELECT due_at, written_at FROM key_uses")
          .one(),
      );
      expect(pending.due_at - pending.written_at).toBeGreaterThanOrEqual(5 * 60_000);

      // The interval passes: the alarm writes the latest use.
      await runInDurableObject(limiter, (object: RateLimiter, state) => {
        state.storage.sql.exec("UPDATE key_uses SET due_at = ?", Date.now());
        const uses = (object as unknown as { uses?: Map<string, { dueAt: number | null }> }).uses;
        for (const use of uses?.values() ?? []) use.dueAt = Date.now();
      });
      expect(await runDurableObjectAlarm(limiter)).toBe(true);
      const latest = (await keyRow(owner.keyId, database))?.last_used_at ?? "";
      expect(Date.parse(latest)).toBeGreaterThanOrEqual(before);
      expect(latest > (first?.last_used_at ?? "")).toBe(true);
    },
  );
});
