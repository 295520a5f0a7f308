/**
 * An exchange racing the revocation of its trust's parent key, or the trust's deletion, never
 * leaves a live key (API_CONTRACT §27, §21): the key is inserted only while the parent is live and
 * the trust exists, in the insert's own statement. Deterministically: the parent is revoked (or the
 * trust deleted) straight in D1 at the exact moment another isolate's write could land, after the
 * exchange read the trust and before it writes the key.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { createOrgWithOwner } from "../../helpers/factories";
import { exchange, trustAndToken } from "../../helpers/oidc";

/** The D1 binding, except that right after the first read of the trust, `change` runs straight in D1. */
function changedAfterTrustRead(change: () => Promise<unknown>): D1Database {
  let done = false;
  const after = async () => {
    if (done) return;
    done = true;
    await change();
  };
  // Each wrapper's own statement, which a batch is given.
  const inner = new WeakMap<object, D1PreparedStatement>();
  const statement = (query: string, stmt: D1PreparedStatement): D1PreparedStatement => {
    const reads = /from "oidc_trusts"/.test(query);
    const wrapRun =
      <A extends unknown[], R>(run: (...args: A) => Promise<R>) =>
      async (...args: A) => {
        const result = await run(...args);
        if (reads) await after();
        return result;
      };
    const wrapper = {
      bind: (...values: unknown[]) => statement(query, stmt.bind(...values)),
      first: wrapRun(stmt.first.bind(stmt)),
      all: wrapRun(stmt.all.bind(stmt)),
      raw: wrapRun(stmt.raw.bind(stmt)),
      run: wrapRun(stmt.run.bind(stmt)),
    };
    inner.set(wrapper, stmt);
    return wrapper as unknown as D1PreparedStatement;
  };
  type Client = Pick<D1Database, "prepare" | "batch">;
  const wrap = (client: Client) => ({
    prepare: (query: string) => statement(query, client.prepare(query)),
    batch: <T>(statements: D1PreparedStatement[]) =>
      client.batch<T>(statements.map((stmt) => inner.get(stmt) ?? stmt)),
  });
  return {
    ...env.DB,
    ...wrap(env.DB),
    withSession: (start?: string) => {
      const session = env.DB.withSession(start as D1SessionConstraint);
      return { ...wrap(session), getBookmark: () => session.getBookmark() };
    },
  } as unknown as D1Database;
}

describe("an exchange racing its trust's end", () => {
  it.each([
    ["its parent key is revoked", "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1", "parent"],
    ["the trust is deleted", "DELETE FROM oidc_trusts WHERE id = ?1 AND ?2 IS NOT NULL", "trust"],
  ])(
    "%s after the exchange read the trust, before it wrote: 401, no key, no entry",
    async (_name, sql, target) => {
      const { owner } = await createOrgWithOwner();
      const { trust, token } = await trustAndToken(owner);
      const id = target === "parent" ? owner.keyId : trust.id;
      const requestId = `exchange-race-${crypto.randomUUID()}`;
      const res = await exchange(trust.id, token, {
        headers: { "x-request-id": requestId },
        bindings: {
          DB: changedAfterTrustRead(() => env.DB.prepare(sql).bind(id, new Date().toISOString()).run()),
        },
      });
      expect(expectError(res, 401, "unauthenticated").message).toMatch(
        /deleted, or the key that made it revoked/,
      );
      const { results } = await env.DB.prepare("SELECT id FROM api_keys WHERE oidc_trust_id = ?")
        .bind(trust.id)
        .all();
      expect(results).toEqual([]);
      expect(await rowsOf(requestId)).toEqual([]);
    },
  );
});
