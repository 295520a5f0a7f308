/**
 * API_CONTRACT §26: a waiting deployment's `blocked_by` says what still holds it, and "a lock or an
 * unlock" changes it. An unlock settles the environment's waiting deployments from what it read;
 * a lock made between that read and the settling's write marks only the deployments whose
 * `blocked_by` lacks "lock" (src/services/environments/lock.ts), so not one the settling read
 * with it. The settling's compare-and-set therefore requires the lock to be as it read it
 * (src/services/deployments/gate.ts `settlingStep`), else it reads again. Made exact here: the lock
 * lands just before the settling's write (`interceptStatements`).
 */
import { describe, expect, it } from "vitest";
import { interceptStatements, once, request } from "../../helpers/api";
import {
  engineCreateOk,
  lock,
  lockPath,
  protectedWorld,
  readDeployment,
  readProtection,
} from "../../helpers/protection";

describe("an unlock's settling beside a new lock (§26)", () => {
  it("a lock landing between the settling's read and its write leaves the waiting deployment held by it", async () => {
    const w = await protectedWorld({ required_approvals: 1 });
    await lock(w.owner, w.environmentId, "first");
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect(d.gate?.blocked_by).toEqual(["approval", "lock"]);

    let relocked = false;
    const DB = interceptStatements({
      // The settling's write (its compare-and-set of the deployment): the unlock's own batch holds
      // no write of a deployment.
      'update "deployments" set': once(async () => {
        await lock(w.owner, w.environmentId, "second");
        relocked = true;
      }),
    });
    const unlocked = await request("DELETE", lockPath(w.environmentId), {
      key: w.owner.key,
      bindings: { DB },
    });
    expect(unlocked.status, unlocked.raw).toBe(204);
    expect(relocked).toBe(true);

    expect((await readProtection(w.owner, w.environmentId)).locked?.reason).toBe("second");
    const after = await readDeployment(w.owner, d.id);
    expect(after.status).toBe("waiting");
    expect(after.gate?.blocked_by).toEqual(["approval", "lock"]);
  });
});
