/**
 * A revoke racing a create from the revoked key never leaves a live child (API_CONTRACT §21):
 * with real concurrency (`Promise.all` of the revoke and several creates, in shuffled orders and
 * with small random delays, many rounds, at depth too), and deterministically, with the key
 * revoked at the exact moment a concurrent revoke can land: after the create has read its
 * calling key as live, before it writes the new one.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { NewApiKeyRecord } from "../../../src/schemas/organization";
import { type ApiResponse, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { type ErrorBody, expectError } from "../../helpers/expect";
import { type Caller, createOrgWithOwner, deriveKey } from "../../helpers/factories";

type Created = ApiResponse<NewApiKeyRecord & ErrorBody>;

const pause = () => new Promise((resolve) => setTimeout(resolve, Math.random() * 6));
const shuffled = <T>(items: T[]) =>
  items
    .map((item) => ({ item, at: Math.random() }))
    .sort((a, b) => a.at - b.at)
    .map((x) => x.item);

/** Every key under `rootId` (at any depth) that is not revoked. */
async function liveDescendants(rootId: string): Promise<string[]> {
  const { results } = await env.DB.prepare(
    `WITH RECURSIVE tree(id) AS (SELECT id FROM api_keys WHERE parent_id = ?
       UNION SELECT k.id FROM api_keys k JOIN tree ON k.parent_id = tree.id)
     SELECT api_keys.id FROM api_keys JOIN tree ON tree.id = api_keys.id WHERE revoked_at IS NULL`,
  )
    .bind(rootId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

const create = (caller: Caller) =>
  request<NewApiKeyRecord & ErrorBody>("POST", "/v1/api-keys", {
    key: caller.key,
    body: {},
  }) as Promise<Created>;

/** Each create either made a key (which is now refused, with its whole tree) or was refused as unauthenticated. */
async function expectNoneLive(results: Created[], rootId: string) {
  for (const res of results) {
    expect([201, 401], res.raw).toContain(res.status);
    if (res.status === 201) {
      expect((await request("GET", "/v1/orgs", { key: res.body.key })).status).toBe(401);
    } else {
      expect(res.body.code).toBe("unauthenticated");
    }
  }
  expect(await liveDescendants(rootId)).toEqual([]);
}

describe("a revoke racing creates from the revoked key", () => {
  it("never leaves a live key under it, whatever the interleaving (many rounds)", async () => {
    const { owner } = await createOrgWithOwner();
    const outcomes = { made: 0, refused: 0 };
    for (let round = 0; round < 8; round++) {
      const parent = await deriveKey(owner, { name: `racer-${round}` });
      const creates: Array<() => Promise<Created | ApiResponse<unknown>>> = Array.from(
        { length: 3 },
        () => async () => {
          await pause();
          return create(parent);
        },
      );
      const revoke = async () => {
        await pause();
        return request("DELETE", `/v1/api-keys/${parent.keyId}`, { key: owner.key });
      };
      const results = await Promise.all(shuffled([...creates, revoke]).map((run) => run()));
      const made = results.filter((r): r is Created => r.status === 201 || r.status === 401);
      expect(results.filter((r) => r.status === 204)).toHaveLength(1);
      await expectNoneLive(made, parent.keyId);
      outcomes.made += made.filter((r) => r.status === 201).length;
      outcomes.refused += made.filter((r) => r.status === 401).length;
    }
    expect(outcomes.made + outcomes.refused).toBe(24);
  });

  it("at depth: revoking the root while its grandchildren are being made", async () => {
    const { owner } = await createOrgWithOwner();
    for (let round = 0; round < 4; round++) {
      const root = await deriveKey(owner);
      const child = await deriveKey(root);
      const results = await Promise.all(
        shuffled<() => Promise<ApiResponse<unknown>>>([
          async () => {
            await pause();
            return request("DELETE", `/v1/api-keys/${root.keyId}`, { key: owner.key });
          },
          ...Array.from({ length: 3 }, () => async () => {
            await pause();
            return create(child);
          }),
        ]).map((run) => run()),
      );
      await expectNoneLive(results.filter((r) => r.status !== 204) as Created[], root.keyId);
      expect(await liveDescendants(root.keyId)).toEqual([]);
    }
  });

  it("revoked after the create read its key as live, before it wrote: 401, nothing made, no entry", async () => {
    const { owner } = await createOrgWithOwner();
    const parent = await deriveKey(owner);
    expect((await request("GET", "/v1/orgs", { key: parent.key })).status).toBe(200); // cached
    const requestId = `race-${crypto.randomUUID()}`;
    const res = await request<ErrorBody>("POST", "/v1/api-keys", {
      key: parent.key,
      body: { name: "too late" },
      headers: { "x-request-id": requestId },
      bindings: { DB: revokedAfterFirstBatch(parent.keyId) },
    });
    expectError(res, 401, "unauthenticated");
    const { results } = await env.DB.prepare("SELECT id FROM api_keys WHERE parent_id = ?")
      .bind(parent.keyId)
      .all();
    expect(results).toEqual([]);
    expect(await rowsOf(requestId)).toEqual([]);
  });
});

/**
 * The D1 binding, except that right after the first batch of a request (the create's read of its
 * calling key), `keyId` is revoked straight in D1, as a revoke by another isolate would.
 */
function revokedAfterFirstBatch(keyId: string): D1Database {
  let revoked = false;
  const afterBatch = async () => {
    if (revoked) return;
    revoked = true;
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), keyId)
      .run();
  };
  type Client = Pick<D1Database, "prepare" | "batch">;
  const wrap = (client: Client) => ({
    prepare: (query: string) => client.prepare(query),
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const results = await client.batch<T>(statements);
      await afterBatch();
      return results;
    },
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
