/**
 * API_CONTRACT §29 and §32: a request refused by a limit, or by a move's fence, changes nothing.
 * A new key's index row in the directory is written before the key's own batch when its
 * organization's database is another (src/services/directory.ts `writeKeyBothSides`): a key
 * refused there takes its row back, so a CI job retrying its token exchange against a full
 * organization leaves nothing behind. A trust's index row, written first too, likewise.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { expectKeyCreatesRefused, expectLimitRefusal, setLimits } from "../../helpers/limits";
import { captureLogs } from "../../helpers/logs";
import { fence } from "../../helpers/moves";
import { claimsFor, exchange, newIssuer, signToken, trustAndToken, trustBody } from "../../helpers/oidc";

// A fenced organization's key use is not recorded either (its `last_used_at` write is refused, and
// logged as an error): captured, not printed.
captureLogs("error");

/** The directory's key index rows of organization `orgId`. */
const indexRowsOf = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM api_key_index WHERE org_id = ?")
      .bind(orgId)
      .first<{ n: number }>()
  )?.n;

describe("a key refused by the api_keys limit, its organization apart from the directory", () => {
  it("leaves no index row in the directory: the internal create, a key made by a key, exchanges retried", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const { trust, issuer } = await trustAndToken(owner);
    await setLimits(org.id, { api_keys: 1 });
    await expectKeyCreatesRefused(org.id, owner);
    for (let i = 0; i < 3; i++)
      expectLimitRefusal(
        await exchange(trust.id, await signToken(claimsFor(issuer, trust.audience))),
        "api_keys",
      );
    expect(await indexRowsOf(org.id)).toBe(1);
    await setLimits(org.id, { api_keys: 2 });
    expect((await request("POST", "/v1/api-keys", { key: owner.key, body: {} })).status).toBe(201);
    expect(await indexRowsOf(org.id)).toBe(2);
  });
});

describe("a key refused by a move's fence, its organization apart from the directory (§32)", () => {
  it("a 408 leaves no index row in the directory either", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const before = await indexRowsOf(org.id);
    // Fenced as a switch fences it: every write of the organization in DB_ORG_2 is refused.
    const lift = await fence("DB_ORG_2", org.id);
    try {
      const refused = await request("POST", "/v1/api-keys", { key: owner.key, body: {} });
      expect(refused.status, refused.raw).toBe(408);
    } finally {
      await lift();
    }
    expect(await indexRowsOf(org.id)).toBe(before);
    expect((await request("POST", "/v1/api-keys", { key: owner.key, body: {} })).status).toBe(201);
    expect(await indexRowsOf(org.id)).toBe((before ?? 0) + 1);
  });
});

describe("a trust refused by a move's fence, its organization apart from the directory (§27, §32)", () => {
  it("a 408 leaves no trust index row in the directory; the create sent again makes one", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const trustRows = async () =>
      (
        await env.DB.prepare("SELECT count(*) AS n FROM oidc_trust_index WHERE org_id = ?")
          .bind(org.id)
          .first<{ n: number }>()
      )?.n;
    const body = trustBody(newIssuer());
    const lift = await fence("DB_ORG_2", org.id);
    try {
      const refused = await request("POST", "/v1/oidc-trusts", { key: owner.key, body });
      expect(refused.status, refused.raw).toBe(408);
    } finally {
      await lift();
    }
    expect(await trustRows()).toBe(0);
    const made = await request("POST", "/v1/oidc-trusts", { key: owner.key, body });
    expect(made.status, made.raw).toBe(201);
    expect(await trustRows()).toBe(1);
  });
});
