/**
 * API_CONTRACT §32 "its keys work" after a move, with their last-use mark (src/rate-limit/key-use.ts):
 * a key's use that waits in its limiter object for the end of the write interval is written to the
 * database its organization is in when the write is made, not to the one it was in when the first
 * use of the interval came.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../../src/rate-limit/limiter";
import { request } from "../../helpers/api";
import { createOrgWithOwnerIn, d1, type OrgDatabase } from "../../helpers/databases";
import { moveOrg } from "../../helpers/moves";
import { sleep } from "../../helpers/wait";

const lastUsed = (database: OrgDatabase, keyId: string) =>
  d1(database)
    .prepare("SELECT last_used_at FROM api_keys WHERE id = ?")
    .bind(keyId)
    .first<{ last_used_at: string | null }>()
    .then((row) => row?.last_used_at ?? null);

describe("a key's last use across a move", () => {
  it("a use pending in the limiter when the organization moves is written where it moved", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${owner.keyId}`));
    // The first use is written by its request; the next, within the interval, waits in the object.
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
    await expect.poll(() => lastUsed("DB", owner.keyId), { interval: 20 }).not.toBeNull();
    const first = (await lastUsed("DB", owner.keyId)) as string;
    await sleep(5);
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);

    await moveOrg(org.id, "DB_ORG_2");
    const afterMove = Date.now();
    expect((await request("GET", "/v1/orgs", { key: owner.key })).status).toBe(200);
    const stored = await runInDurableObject(limiter, (_object: RateLimiter, state) =>
      state.storage.sql.exec<{ database: string }>("SELECT database FROM key_uses").one(),
    );
    expect(stored.database).toBe("DB_ORG_2");

    // The interval ends: the alarm writes the latest use, in the database that holds the key now.
    await runInDurableObject(limiter, (object: RateLimiter, state) => {
      state.storage.sql.exec("UPDATE key_uses SET due_at = ?", Date.now());
      const uses = (object as unknown as { uses?: Map<string, { dueAt: number | null }> }).uses;
      for (const use of uses?.values() ?? []) use.dueAt = Date.now();
    });
    expect(await runDurableObjectAlarm(limiter)).toBe(true);
    const written = (await lastUsed("DB_ORG_2", owner.keyId)) ?? "";
    expect(written > first, `${written} after ${first}`).toBe(true);
    expect(Date.parse(written)).toBeGreaterThanOrEqual(afterMove);
  });
});
