/** exchangeOidcToken: POST /v1/oidc/token, a CI run's ID token for a short-lived key (API_CONTRACT §27, §28). */
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { CurrentApiKeyInfo } from "../../../src/schemas/organization";
import { freshClientIp, PRODUCTION_LIMITS, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { expectError, NEW_ID, TS } from "../../helpers/expect";
import { createOrgWithOwner, createProject, deriveKey } from "../../helpers/factories";
import {
  claimsFor,
  exchange,
  exchangeOk,
  issuerRequests,
  setIssuerModes,
  signToken,
  trustAndToken,
} from "../../helpers/oidc";

const KEY = /^dpk_[A-Za-z0-9_-]{43}$/;
/** A well-formed trust ID that names no trust. */
const NEW_TRUST_ID = "1111111111111111111111";

describe("POST /v1/oidc/token", () => {
  it.each(["rsa-1", "ec-1"] as const)(
    "answers a key acting as the trust's account with its powers, for a %s token",
    async (kid) => {
      const { org, owner } = await createOrgWithOwner();
      const project = await createProject(owner);
      const { issuer, trust } = await trustAndToken(owner, {
        scopes: ["deployments:read", "deployments:write"],
        project_ids: [project.id],
        ttl: 600,
      });
      const token = await signToken(claimsFor(issuer, trust.audience), kid);
      const before = Date.now();
      const res = await exchange(trust.id, token);
      expect(res.status, res.raw).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(NEW_ID),
        name: trust.name,
        org_id: org.id,
        account_id: owner.accountId,
        parent_id: owner.keyId,
        scopes: ["deployments:read", "deployments:write"],
        project_ids: [project.id],
        expires_at: expect.stringMatching(TS),
        last_used_at: null,
        revoked_at: null,
        created_at: expect.stringMatching(TS),
        oidc: { trust_id: trust.id, subject: "repo:acme/storefront:ref:refs/heads/main" },
        key: expect.stringMatching(KEY),
      });
      const expiresIn = Date.parse(res.body.expires_at ?? "") - before;
      expect(expiresIn).toBeGreaterThan(599_000);
      expect(expiresIn).toBeLessThan(605_000);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("location")).toBe(`/v1/api-keys/${res.body.id}`);
      expect(res.headers.get("ratelimit-policy")).toBe('"oidc-exchange";q=1000000;w=60');

      const { key: _key, ...record } = res.body;
      const read = await request("GET", `/v1/api-keys/${res.body.id}`, { key: owner.key });
      expect(read.body).toEqual(record);
      expect(res.headers.get("etag")).toBe(read.headers.get("etag"));
      // The key works, and shows what it is.
      const current = await request<CurrentApiKeyInfo>("GET", "/v1/api-keys/current", { key: res.body.key });
      expect(current.status).toBe(200);
      expect(current.body.oidc).toEqual(res.body.oidc);
    },
  );

  it("audits exchangeOidcToken with the new key as actor and the token's sub, repository, ref and run_id, never the token", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { trust, token } = await trustAndToken(owner);
    const requestId = `exchange-${crypto.randomUUID()}`;
    const res = await exchange(trust.id, token, { headers: { "x-request-id": requestId } });
    expect(res.status, res.raw).toBe(201);
    const entries = await rowsOf(requestId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      org_id: org.id,
      action: "exchangeOidcToken",
      target_type: "api_key",
      target_id: res.body.id,
      actor_type: "api_key",
      actor_account_id: owner.accountId,
      actor_api_key_id: res.body.id,
    });
    const changes = JSON.parse(String(entries[0]?.changes));
    expect(changes).toMatchObject({
      sub: { from: null, to: "repo:acme/storefront:ref:refs/heads/main" },
      repository: { from: null, to: "acme/storefront" },
      ref: { from: null, to: "refs/heads/main" },
      run_id: { from: null, to: "1234567890" },
    });
    expect(JSON.stringify(entries[0])).not.toContain(token.split(".")[2]);
    expect(JSON.stringify(entries[0])).not.toContain(res.body.key);
  });

  it("refuses a request that also sends an API key (400), counted", async () => {
    const { owner } = await createOrgWithOwner();
    const { trust, token } = await trustAndToken(owner);
    const res = await exchange(trust.id, token, { key: owner.key });
    expectError(res, 400, "bad_input", "header.x-api-key");
    expect(res.headers.get("ratelimit-policy")).toBe('"oidc-exchange";q=1000000;w=60');
    // Nothing was exchanged: the token still is.
    expect((await exchange(trust.id, token)).status).toBe(201);
  });

  it("refuses an unknown trust, and one whose parent key was revoked, with 401 naming the check", async () => {
    const { owner } = await createOrgWithOwner();
    const parent = await deriveKey(owner);
    const { trust, token } = await trustAndToken(parent);
    const unknown = expectError(await exchange("1111111111111111111111", token), 401, "unauthenticated");
    expect(unknown.message).toMatch(/No such trust/);
    // Of any form (§27: "any failure, an unknown … trust included, is 401"), not a 400.
    for (const trustId of ["nonexistent-trust", "", "x".repeat(200)]) {
      const res = expectError(await exchange(trustId, token), 401, "unauthenticated");
      expect(res.message).toMatch(/No such trust/);
    }
    expect((await request("DELETE", `/v1/api-keys/${parent.keyId}`, { key: owner.key })).status).toBe(204);
    const res = expectError(await exchange(trust.id, token), 401, "unauthenticated");
    expect(res.message).toMatch(/revoked or has expired/);
  });

  it("an Idempotency-Key is the token's own: a retry answers the stored 201 (the same key); another token's executes; another body is 400", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust, token } = await trustAndToken(owner);
    const headers = { "idempotency-key": "ci-login" };
    const issued = async () =>
      (
        await request<{ data: { oidc: { trust_id: string } | null }[] }>("GET", "/v1/api-keys?limit=240", {
          key: owner.key,
        })
      ).body.data.filter((k) => k.oidc?.trust_id === trust.id).length;
    const first = await exchange(trust.id, token, { headers });
    expect(first.status, first.raw).toBe(201);
    const retry = await exchange(trust.id, token, { headers });
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
    expect(retry.headers.get("cache-control")).toBe("no-store");
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));
    expect(await issued()).toBe(1);
    // Without the header the token is spent, as before.
    expectError(await exchange(trust.id, token), 401, "unauthenticated");
    // Another run's token with the same Idempotency-Key: a key of its own, so it executes.
    const second = await exchange(trust.id, await signToken(claimsFor(issuer, trust.audience)), { headers });
    expect(second.status, second.raw).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(second.body.id).not.toBe(first.body.id);
    // The same token and key with another body: 400 on the header, nothing executes.
    const other = await exchange(trust.id, token, { headers, body: { trust_id: NEW_TRUST_ID, token } });
    expectError(other, 400, "bad_input", "header.idempotency-key");
    expect(await issued()).toBe(2);
    // Sent five times at once: one exchange; the others replay it or wait (409, Retry-After: 1).
    const racing = await signToken(claimsFor(issuer, trust.audience));
    const burst = await Promise.all(
      Array.from({ length: 5 }, () =>
        exchange(trust.id, racing, { headers: { "idempotency-key": "burst" } }),
      ),
    );
    const executed = burst.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(executed).toHaveLength(1);
    for (const r of burst) {
      if (r.status === 201) expect(r.body.id).toBe(executed[0]?.body.id);
      else expect([r.status, r.headers.get("retry-after")], r.raw).toEqual([409, "1"]);
    }
    expect(await issued()).toBe(3);
  });

  it("an exchange refused with 401 keeps no Idempotency-Key: once the cause is mended, the same request runs", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust, token } = await trustAndToken(owner);
    const headers = { "idempotency-key": "mended" };
    await setIssuerModes(issuer, { discovery: "error" });
    const refused = await exchange(trust.id, token, { headers });
    expectError(refused, 401, "unauthenticated");
    expect(refused.headers.get("idempotent-replayed")).toBeNull();
    await setIssuerModes(issuer, { discovery: "ok" });
    const mended = await exchange(trust.id, token, { headers });
    expect([mended.status, mended.headers.get("idempotent-replayed")], mended.raw).toEqual([201, null]);
  });

  it("a replay lasts as long as its token: past `exp`, the same key and body is the expired token's 401", async () => {
    const { owner } = await createOrgWithOwner();
    const { trust, token } = await trustAndToken(owner); // `exp` 5 minutes from now
    const headers = { "idempotency-key": "short-lived" };
    expect((await exchange(trust.id, token, { headers })).status).toBe(201);
    const real = Date.now.bind(Date);
    const clock = vi.spyOn(Date, "now").mockImplementation(() => real() + 301_000);
    try {
      const late = await exchange(trust.id, token, { headers });
      expect(expectError(late, 401, "unauthenticated").message).toMatch(/expired/);
      expect(late.headers.get("idempotent-replayed")).toBeNull();
    } finally {
      clock.mockRestore();
    }
  });

  it("validates the body (400) before anything else", async () => {
    expectError(
      await exchange("x", "y", { body: { trust_id: "1111111111111111111111" } }),
      400,
      "bad_input",
      "token",
    );
    expectError(
      await exchange("x", "y", { body: { trust_id: "1111111111111111111111", token: "a.b.c", extra: 1 } }),
      400,
      "bad_input",
      "extra",
    );
  });

  it("a key expires exactly `ttl` seconds after its exchange: its `expires_at` is its `created_at` plus `ttl`", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust } = await trustAndToken(owner, { ttl: 300 });
    // A clock that moves on at every reading, as a real one may between two of them: both fields
    // must come from one reading.
    const real = Date.now.bind(Date);
    let tick = 0;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => real() + tick++);
    try {
      for (let i = 0; i < 3; i++) {
        const key = await exchangeOk(trust.id, await signToken(claimsFor(issuer, trust.audience)));
        expect(Date.parse(key.expires_at ?? "") - Date.parse(key.created_at)).toBe(300_000);
      }
    } finally {
      clock.mockRestore();
    }
  });

  it("never expires a key after the key its trust was made under", async () => {
    const { owner } = await createOrgWithOwner();
    const soon = new Date(Date.now() + 120_000).toISOString();
    const parent = await deriveKey(owner, { expires_at: soon });
    const { trust, token } = await trustAndToken(parent, { ttl: 3600 });
    const key = await exchangeOk(trust.id, token);
    expect(key.expires_at).toBe(soon);
  });
});

describe("the keys a trust issued (§27, §21, §28)", () => {
  it("deleting the trust revokes them, and the keys made from them; later exchanges are 401", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust, token } = await trustAndToken(owner);
    const issued = await exchangeOk(trust.id, token);
    const made = await request<{ key: string; id: string }>("POST", "/v1/api-keys", {
      key: issued.key,
      body: {},
    });
    expect(made.status, made.raw).toBe(201);
    const other = await exchangeOk(trust.id, await signToken(claimsFor(issuer, trust.audience)));
    expect((await request("DELETE", `/v1/oidc-trusts/${trust.id}`, { key: owner.key })).status).toBe(204);
    for (const key of [issued.key, made.body.key, other.key]) {
      expectError(await request("GET", "/v1/api-keys/current", { key }), 401, "unauthenticated");
    }
    const later = expectError(
      await exchange(trust.id, await signToken(claimsFor(issuer, trust.audience))),
      401,
      "unauthenticated",
    );
    expect(later.message).toMatch(/No such trust/);
    // The trust's parent key is untouched.
    expect((await request("GET", "/v1/api-keys/current", { key: owner.key })).status).toBe(200);
  });

  it("revoking the trust's parent key revokes them (§21's cascade)", async () => {
    const { owner } = await createOrgWithOwner();
    const parent = await deriveKey(owner);
    const { trust, token } = await trustAndToken(parent);
    const issued = await exchangeOk(trust.id, token);
    expect((await request("DELETE", `/v1/api-keys/${parent.keyId}`, { key: owner.key })).status).toBe(204);
    expectError(await request("GET", "/v1/api-keys/current", { key: issued.key }), 401, "unauthenticated");
    const row = await env.DB.prepare("SELECT revoked_at FROM api_keys WHERE id = ?")
      .bind(issued.id)
      .first<{ revoked_at: string | null }>();
    expect(row?.revoked_at).toMatch(TS);
  });

  it("share one window of their own per trust, apart from the parent key's (§28)", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust, token } = await trustAndToken(owner);
    const first = await exchangeOk(trust.id, token);
    const second = await exchangeOk(trust.id, await signToken(claimsFor(issuer, trust.audience)));
    const limits = { bindings: PRODUCTION_LIMITS, headers: { "cf-connecting-ip": freshClientIp() } };
    const remaining = async (key: string) =>
      Number((await request("GET", "/v1/orgs", { key, ...limits })).headers.get("x-ratelimit-remaining"));
    expect(await remaining(first.key)).toBe(99);
    expect(await remaining(second.key)).toBe(98);
    // A key made from an issued key counts there too.
    const made = await request<{ key: string }>("POST", "/v1/api-keys", { key: first.key, body: {} });
    expect(await remaining(made.body.key)).toBe(97);
    // The parent's family has its own window: it holds the trust's create, none of the above.
    expect(await remaining(owner.key)).toBe(98);
    const row = await env.DB.prepare("SELECT limiter FROM api_keys WHERE id = ?")
      .bind(first.id)
      .first<{ limiter: string }>();
    expect(row?.limiter).toBe(`trust:${trust.id}`);
  });

  it("every other key record has oidc null", async () => {
    const { owner } = await createOrgWithOwner();
    const current = await request<CurrentApiKeyInfo>("GET", "/v1/api-keys/current", { key: owner.key });
    expect(current.body.oidc).toBeNull();
    const made = await request<{ oidc: unknown }>("POST", "/v1/api-keys", { key: owner.key, body: {} });
    expect(made.body.oidc).toBeNull();
  });
});

describe("an organization in another database than the directory (src/db/databases.ts)", () => {
  it("is found through the directory's index: trust, exchange, key, deletion", async () => {
    const { owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const { trust, token } = await trustAndToken(owner);
    const index = (db: D1Database) =>
      db.prepare("SELECT org_id FROM oidc_trust_index WHERE trust_id = ?").bind(trust.id).first();
    expect(await index(env.DB)).toEqual({ org_id: owner.orgId });
    const trustRow = await env.DB_ORG_2.prepare("SELECT id FROM oidc_trusts WHERE id = ?")
      .bind(trust.id)
      .first();
    expect(trustRow).toEqual({ id: trust.id });
    const issued = await exchangeOk(trust.id, token);
    expect((await request("GET", "/v1/api-keys/current", { key: issued.key })).status).toBe(200);
    expect((await request("DELETE", `/v1/oidc-trusts/${trust.id}`, { key: owner.key })).status).toBe(204);
    expect(await index(env.DB)).toBeNull();
    expectError(await request("GET", "/v1/api-keys/current", { key: issued.key }), 401, "unauthenticated");
  });
});

describe("the oidc-exchange policy (60 / 60 s per client address)", () => {
  it("counts every exchange, answered or refused, per client; an IPv6 client by its /64", async () => {
    const { owner } = await createOrgWithOwner();
    const { trust, token } = await trustAndToken(owner);
    const prefix = freshClientIp().split(":").slice(0, 4).join(":");
    const from = (i: number) => ({
      bindings: PRODUCTION_LIMITS,
      headers: { "cf-connecting-ip": `${prefix}::${(i + 1).toString(16)}` },
    });
    // One answered, then refusals (a replayed token), from 60 addresses of one /64.
    const answered = await exchange(trust.id, token, from(0));
    expect(answered.status).toBe(201);
    expect(answered.headers.get("x-ratelimit-remaining")).toBe("59");
    for (let i = 1; i < 60; i++) {
      const res = await exchange(trust.id, token, from(i));
      expect(res.status).toBe(401);
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(59 - i));
    }
    const over = await exchange(trust.id, token, from(60));
    expect(over.status).toBe(429);
    expect(over.headers.get("ratelimit-policy")).toBe('"oidc-exchange";q=60;w=60');
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // Another client is counted apart, and the anonymous policy is untouched.
    const elsewhere = await exchange(trust.id, token, {
      bindings: PRODUCTION_LIMITS,
      headers: { "cf-connecting-ip": freshClientIp() },
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("x-ratelimit-remaining")).toBe("59");
  });

  it("publishes the policy, and no scope, on the operation", async () => {
    const doc = await request<{ paths: Record<string, Record<string, Record<string, unknown>>> }>(
      "GET",
      "/openapi.json",
    );
    const op = doc.body.paths["/v1/oidc/token"]?.post ?? {};
    expect(op["x-rate-limit-policy"]).toBe("oidc-exchange");
    expect(op["x-required-scope"]).toBeUndefined();
    expect(op.security).toEqual([]);
  });
});

describe("the issuer's key set, cached per isolate", () => {
  it("an exchange with a cached key set makes no request to the issuer", async () => {
    const { owner } = await createOrgWithOwner();
    const { issuer, trust, token } = await trustAndToken(owner);
    await exchangeOk(trust.id, token);
    const asked = await issuerRequests(issuer);
    expect(asked).toEqual(["/.well-known/openid-configuration", "/jwks"]);
    await exchangeOk(trust.id, await signToken(claimsFor(issuer, trust.audience), "ec-1"));
    expect(await issuerRequests(issuer)).toEqual(asked);
  });
});
