/**
 * A trust's exchanged tokens in its limiter object (src/rate-limit/jti.ts; API_CONTRACT §27): a
 * `jti` is claimed once while its token is valid, claimable again once it expired, and the alarm
 * forgets it then, leaving an idle object with no storage.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import { sleep } from "../helpers/wait";

const freshTrustObject = () =>
  env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`trust:${crypto.randomUUID()}`));

describe("claimJti", () => {
  it("claims a jti once until its token expires, then again", async () => {
    const stub = freshTrustObject();
    const until = Date.now() + 60_000;
    expect(await stub.claimJti({ jti: "a", until })).toBe(true);
    expect(await stub.claimJti({ jti: "a", until })).toBe(false);
    expect(await stub.claimJti({ jti: "b", until })).toBe(true);
    const expired = Date.now() - 1;
    await runInDurableObject(stub, (_o: RateLimiter, state) => {
      state.storage.sql.exec("UPDATE oidc_jti SET until = ? WHERE jti = 'a'", expired);
    });
    expect(await stub.claimJti({ jti: "a", until })).toBe(true);
  });

  it("the alarm forgets expired claims and, with nothing left, all of the object's storage", async () => {
    const stub = freshTrustObject();
    expect(await stub.claimJti({ jti: "gone-soon", until: Date.now() + 50 })).toBe(true);
    expect(await stub.jtiEntries()).toBe(1);
    const alarmAt = await runInDurableObject(stub, (_o: RateLimiter, state) => state.storage.getAlarm());
    expect(alarmAt).not.toBeNull();
    await sleep(60);
    await runDurableObjectAlarm(stub);
    const tables = await runInDurableObject(stub, (_o: RateLimiter, state) =>
      state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table'").toArray(),
    );
    expect(tables).toEqual([]);
  });

  it("keeps an unexpired claim through the alarm", async () => {
    const stub = freshTrustObject();
    expect(await stub.claimJti({ jti: "kept", until: Date.now() + 3600_000 })).toBe(true);
    await runDurableObjectAlarm(stub);
    expect(await stub.jtiEntries()).toBe(1);
    expect(await stub.claimJti({ jti: "kept", until: Date.now() + 3600_000 })).toBe(false);
  });
});
