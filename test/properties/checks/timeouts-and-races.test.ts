/**
 * API_CONTRACT §31: a check still pending at its timeout concludes by itself within 5 s, without
 * any request, as `on_timeout` says, with the same consequences; two conclusions of one check at
 * once, and a conclusion racing the timeout, record exactly one outcome; what a crash cut short
 * after a conclusion committed, the cron finishes.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { EnvironmentGate } from "../../../src/gate/object";
import { failingStatements, interceptStatements, once } from "../../helpers/api";
import {
  checkedWorld,
  conclude,
  deploymentEvents,
  dueIn,
  protectWithChecks,
  scheduleSettle,
  TWO_CHECKS,
} from "../../helpers/checks";
import { overdueSettled, runCron, SWEEP_CRON } from "../../helpers/cron";
import { recordingD1 } from "../../helpers/d1-trips";
import { createProjectWithStack } from "../../helpers/factories";
import { capturedWhile, captureLogs } from "../../helpers/logs";
import { engineCreateOk, readDeployment, rowOf } from "../../helpers/protection";
import { sleep, until } from "../../helpers/wait";

captureLogs("log");

/** The checks of the `deployment.check_concluded` events written for a deployment. */
const concludedEvents = async (deploymentId: string) =>
  (
    await deploymentEvents<{ check: { name: string; state: string; reason: string | null } }>(
      "deployment.check_concluded",
      deploymentId,
    )
  ).map((e) => e.check);

describe("a check's timeout", () => {
  it("concludes it by itself within 5 s of created_at + timeout, without any request (on_timeout pass: released)", async () => {
    const w = await checkedWorld([{ name: "soak", timeout: 10, on_timeout: "pass" }]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const due = Date.parse(d.created_at) + 10_000;
    // Only D1 is read meanwhile: nothing reaches the service.
    await until("released", async () => (await rowOf(d.id)).status === "queued", 20_000);
    expect(Date.now() - due).toBeLessThan(5_000);
    const row = await rowOf(d.id);
    expect(row.gate?.checks).toEqual([
      {
        name: "soak",
        state: "passed",
        reason: "timeout",
        details_url: null,
        summary: null,
        concluded_at: expect.any(String),
      },
    ]);
    expect(row.gate?.blocked_by).toEqual([]);
    expect(await concludedEvents(d.id)).toEqual([
      expect.objectContaining({ name: "soak", state: "passed", reason: "timeout" }),
    ]);
  }, 30_000);

  it("on_timeout fail: failed, reason timeout, the deployment cancelled", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const at = await dueIn(d.id, "security-scan", 200);
    await scheduleSettle(w.environmentId, d.id, Date.parse(at));
    await until("cancelled", async () => (await rowOf(d.id)).status === "cancelled");
    const read = await readDeployment(w.owner, d.id);
    expect(read.gate?.checks.map((c) => [c.name, c.state, c.reason])).toEqual([
      ["e2e", "pending", null],
      ["security-scan", "failed", "timeout"],
    ]);
  });

  it("a conclusion sent after the deadline, before the timer ran, is 409: the timeout decided, as on_timeout says", async () => {
    for (const [onTimeout, sent, status] of [
      ["fail", "passed", "cancelled"],
      ["pass", "failed", "queued"],
    ] as const) {
      const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: onTimeout }]);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      // The deadline passed a second ago; the gate's timer is still set for the day's end.
      const at = await dueIn(d.id, "e2e", -1_000);
      const res = await conclude(w.owner, d.id, "e2e", { conclusion: sent });
      expect(res.status, res.raw).toBe(409);
      const row = await rowOf(d.id);
      expect(row.status).toBe(status);
      expect(row.gate?.checks?.[0]).toMatchObject({
        state: onTimeout === "fail" ? "failed" : "passed",
        reason: "timeout",
      });
      expect(Date.parse(row.gate?.checks?.[0]?.concluded_at ?? "")).toBeGreaterThanOrEqual(Date.parse(at));
      expect(await concludedEvents(d.id)).toEqual([
        expect.objectContaining({ name: "e2e", reason: "timeout" }),
      ]);
    }
  });

  it("a conclusion racing the timeout: exactly one outcome, one event", async () => {
    for (let round = 0; round < 4; round++) {
      const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "fail" }]);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const at = await dueIn(d.id, "e2e", 30);
      await scheduleSettle(w.environmentId, d.id, Date.parse(at));
      await sleep(25);
      const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
      expect([200, 409]).toContain(res.status);
      await until("final", async () => (await rowOf(d.id)).status !== "waiting");
      const row = await rowOf(d.id);
      const check = row.gate?.checks?.[0];
      // Either the request's pass (released) or the timeout's failure (cancelled), never both.
      if (check?.reason === "timeout") {
        expect(check.state).toBe("failed");
        expect(row.status).toBe("cancelled");
        expect(res.status).toBe(409);
      } else {
        expect(check?.state).toBe("passed");
        expect(row.status).toBe("queued");
        expect(res.status).toBe(200);
      }
      expect(await concludedEvents(d.id)).toHaveLength(1);
    }
  });
});

describe("races", () => {
  it("two conclusions of the same check at once: one wins, the other is 409", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const answers = await Promise.all([
      conclude(w.owner, d.id, "e2e", { conclusion: "passed" }),
      conclude(w.owner, d.id, "e2e", { conclusion: "failed" }),
      conclude(w.owner, d.id, "e2e", { conclusion: "passed", summary: "again" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
    expect(await concludedEvents(d.id)).toHaveLength(1);
    const winner = answers.find((a) => a.status === 200)?.body;
    expect((await readDeployment(w.owner, d.id)).gate?.checks[0]?.state).toBe(winner?.gate?.checks[0]?.state);
  });

  it("every check concluded at once: released exactly once", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await Promise.all(TWO_CHECKS.map((c) => conclude(w.owner, d.id, c.name, { conclusion: "passed" })));
    await until("released", async () => (await rowOf(d.id)).status === "queued");
    const { results } = await env.DB.prepare(
      "SELECT count(*) AS n FROM events WHERE type = 'deployment.released' AND json_extract(data, '$.deployment.id') = ?",
    )
      .bind(d.id)
      .all<{ n: number }>();
    expect(results[0]?.n).toBe(1);
  });
});

describe("what a crash cut short after a conclusion committed", () => {
  /** A conclusion as its request's batch commits it, `agoMs` ago, its consequence lost. */
  async function committedConclusion(id: string, name: string, state: "passed" | "failed", agoMs: number) {
    const at = new Date(Date.now() - agoMs).toISOString();
    await env.DB.prepare(
      "UPDATE deployments SET gate = (SELECT json_set(gate, '$.checks', (SELECT json_group_array(CASE WHEN json_extract(c.value, '$.name') = ?2 THEN json_set(c.value, '$.state', ?3, '$.concluded_at', ?4) ELSE json(c.value) END) FROM json_each(gate, '$.checks') AS c))), updated_at = ?4 WHERE id = ?1",
    )
      .bind(id, name, state, at)
      .run();
  }

  it("the last pass's release, the failure's cancel: the cron carries them out a minute on, and not before", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "fail" }]);
    const [passed, failed, fresh] = [
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
    ];
    await committedConclusion(passed.id, "e2e", "passed", 2 * 60_000);
    await committedConclusion(failed.id, "e2e", "failed", 2 * 60_000);
    await committedConclusion(fresh.id, "e2e", "passed", 0);
    // Its summary counts these two (and what other files sharing the runtime left overdue).
    expect(overdueSettled(await runCron())).toBeGreaterThanOrEqual(2);
    expect((await rowOf(passed.id)).status).toBe("queued");
    expect((await rowOf(failed.id)).status).toBe("cancelled");
    expect((await rowOf(fresh.id)).status).toBe("waiting");
  });

  it("a timer that names a database its organization is not in (scheduled just before a move switched) settles where the directory says it is, on time", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "pass" }]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const at = await dueIn(d.id, "e2e", 200);
    // As a create's or a settling's call does, but naming the other database (a move's source).
    await env.ENVIRONMENT_GATES.get(env.ENVIRONMENT_GATES.idFromName(w.environmentId)).schedule(
      d.id,
      Date.parse(at),
      "DB_ORG_2",
      w.owner.orgId,
    );
    await until("released", async () => (await rowOf(d.id)).status === "queued");
    expect((await rowOf(d.id)).gate?.checks?.[0]).toMatchObject({ state: "passed", reason: "timeout" });
  });

  it("the checks of many deployments timing out together in one environment are settled together: a read and a write for twenty", async () => {
    const w = await checkedWorld([{ name: "soak", timeout: 86_400, on_timeout: "pass" }]);
    const made = await madeWaiting(w, 16);
    const recording = recordingD1();
    await settledTogether(w.environmentId, made, recording.env, () => allReleased(made));
    // One by one, each would be a read and a write at least (≥ 32).
    expect(recording.trips.length).toBeLessThanOrEqual(3);
    for (const id of made) {
      expect(await concludedEvents(id)).toEqual([
        expect.objectContaining({ name: "soak", state: "passed", reason: "timeout" }),
      ]);
    }
  }, 30_000);

  it("settled together, a batch that fails leaves each to be settled alone, and one rejected meanwhile is cancelled", async () => {
    const w = await checkedWorld([{ name: "soak", timeout: 86_400, on_timeout: "pass" }]);
    const made = await madeWaiting(w, 5);
    const rejected = made[2] as string;
    // A rejection whose request's cancel was cut short: the settling carries it out.
    await env.DB.prepare(
      "INSERT INTO deployment_reviews (deployment_id, account_id, project_id, state, comment, created_at) SELECT id, ?, project_id, 'rejected', NULL, ? FROM deployments WHERE id = ?",
    )
      .bind(w.owner.accountId, new Date().toISOString(), rejected)
      .run();
    let failed = 0;
    const DB = interceptStatements({
      update: once(async () => {
        failed++;
        throw new Error("D1_ERROR: injected failure");
      }),
    });
    const others = made.filter((id) => id !== rejected);
    const { lines } = await capturedWhile(["error", "warn"], () =>
      settledTogether(w.environmentId, made, { ...env, DB }, async () => {
        await allReleased(others);
        await until("the rejected one cancelled", async () => (await rowOf(rejected)).status === "cancelled");
      }),
    );
    expect(failed).toBe(1);
    // In the same alarm: none failed, to be retried.
    expect(lines.map((line) => line.msg)).not.toContain("gate timers failed");
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "gate settling together failed; each settled alone" }),
    );
    for (const id of others) expect((await concludedEvents(id)).length).toBe(1);
    expect(await concludedEvents(rejected)).toEqual([]);
  }, 30_000);

  it("under supersede, one at a time: the newer due first is released, and the older ones are cancelled waiting, never released", async () => {
    const w = await checkedWorld([{ name: "soak", timeout: 86_400, on_timeout: "pass" }], {
      concurrency: "supersede",
    });
    const made = await madeWaiting(w, 6);
    const newest = made[made.length - 1] as string;
    // The newest due first, then the older ones (their deadlines later).
    await settledTogether(w.environmentId, [newest, ...made.slice(0, -1)], env, async () => {
      await until("the newest released, the others cancelled", async () => {
        const rows = await Promise.all(made.map(rowOf));
        return rows.every((row, i) => row.status === (i === made.length - 1 ? "queued" : "cancelled"));
      });
    });
    for (const id of made.slice(0, -1)) {
      expect(await cancelReason(id)).toBe(`Superseded by deployment ${newest}.`);
      expect(await deploymentEvents("deployment.released", id)).toEqual([]);
    }
  }, 30_000);

  it("a policy changed to supersede between the read and the write: each is settled alone, the newer due first released, the older never", async () => {
    const w = await checkedWorld([{ name: "soak", timeout: 86_400, on_timeout: "pass" }]);
    const made = await madeWaiting(w, 4);
    const newest = made[made.length - 1] as string;
    const DB = interceptStatements({ update: once(() => supersedeNow(w.environmentId)) });
    await settledTogether(w.environmentId, [newest, ...made.slice(0, -1)], { ...env, DB }, async () => {
      await until("the newest queued, every older one cancelled", async () => {
        const rows = await Promise.all(made.map(rowOf));
        return rows.every((row, i) => row.status === (i === made.length - 1 ? "queued" : "cancelled"));
      });
    });
    for (const id of made.slice(0, -1)) expect(await deploymentEvents("deployment.released", id)).toEqual([]);
  }, 30_000);

  it("releases written together apply supersede by the policy after their commit: one changed to supersede just after cancels the older ones", async () => {
    const w = await createProjectWithStack();
    const older = [
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
    ];
    await protectWithChecks(w.owner, w.environmentId, [
      { name: "soak", timeout: 86_400, on_timeout: "pass" },
    ]);
    const made = await madeWaiting(w, 3);
    // Written as `parallel`; `supersede` by the time the policy is read after the commit.
    const DB = interceptStatements({
      'select "concurrency" from "environment_protections"': once(() => supersedeNow(w.environmentId)),
    });
    await settledTogether(w.environmentId, made, { ...env, DB }, async () => {
      await until("the newest queued, every older one cancelled", async () => {
        const rows = await Promise.all([...older.map((d) => d.id), ...made].map(rowOf));
        return rows.every((row, i) => row.status === (i === rows.length - 1 ? "queued" : "cancelled"));
      });
    });
    // Released together under `parallel`, then superseded.
    for (const id of made) expect((await deploymentEvents("deployment.released", id)).length).toBe(1);
    expect(older.map((d) => d.status)).toEqual(["queued", "queued"]);
  }, 30_000);

  it("a settling that comes after two deadlines decides what settlings on time would have: a failure ends it", async () => {
    // The gate lists the pass first; the failing check is due first (a settling after a crash, say).
    const checks = [
      { name: "soak", timeout: 86_400, on_timeout: "pass" as const },
      { name: "ci", timeout: 86_400, on_timeout: "fail" as const },
    ];
    const w = await checkedWorld(checks);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await dueIn(d.id, "ci", -5_000);
    await dueIn(d.id, "soak", -2_000);
    await scheduleSettle(w.environmentId, d.id, Date.now());
    await until("cancelled", async () => (await rowOf(d.id)).status === "cancelled");
    // The failure cancelled the deployment at its deadline: the later check was never due on a waiting one.
    expect((await rowOf(d.id)).gate?.checks.map((c) => [c.name, c.state, c.reason])).toEqual([
      ["soak", "pending", null],
      ["ci", "failed", "timeout"],
    ]);
    expect(await concludedEvents(d.id)).toEqual([
      expect.objectContaining({ name: "ci", state: "failed", reason: "timeout" }),
    ]);
  });

  it("a late settling whose pass was due before its failure concludes both, as on time", async () => {
    const w = await checkedWorld([
      { name: "ci", timeout: 86_400, on_timeout: "fail" },
      { name: "soak", timeout: 86_400, on_timeout: "pass" },
    ]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await dueIn(d.id, "soak", -5_000);
    await dueIn(d.id, "ci", -2_000);
    await scheduleSettle(w.environmentId, d.id, Date.now());
    await until("cancelled", async () => (await rowOf(d.id)).status === "cancelled");
    expect((await rowOf(d.id)).gate?.checks.map((c) => [c.name, c.state, c.reason])).toEqual([
      ["ci", "failed", "timeout"],
      ["soak", "passed", "timeout"],
    ]);
    const events = await concludedEvents(d.id);
    expect(events.map((c) => [c.name, c.state]).sort()).toEqual([
      ["ci", "failed"],
      ["soak", "passed"],
    ]);
  });

  it("a check a minute past its deadline whose timer was lost: the cron concludes it", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "pass" }]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await dueIn(d.id, "e2e", -2 * 60_000);
    expect(overdueSettled(await runCron())).toBeGreaterThanOrEqual(1);
    const row = await rowOf(d.id);
    expect(row.status).toBe("queued");
    expect(row.gate?.checks?.[0]).toMatchObject({ state: "passed", reason: "timeout" });
  });
});

describe("a timeout's failure written whole", () => {
  const errors = captureLogs("error");

  it("a timeout's failure and its cancel are one write: when it fails, the check is still pending, never failed on a waiting deployment", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "fail" }]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await dueIn(d.id, "e2e", -2 * 60_000);
    // The cron's settling of it, with D1 failing the statement that cancels (the crash of a write).
    await runCron(SWEEP_CRON, { ...env, DB: failingStatements('update "deployments" set "data"') });
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "gate sweep: settle failed; the next run tries again",
        deployment_id: d.id,
        error: "Error: D1_ERROR: injected failure",
      }),
    );
    const cut = await rowOf(d.id);
    expect([cut.status, cut.gate?.checks?.[0]?.state]).toEqual(["waiting", "pending"]);
    expect(await concludedEvents(d.id)).toEqual([]);
    // The next run carries the timeout out whole.
    await runCron();
    const row = await rowOf(d.id);
    expect(row.status).toBe("cancelled");
    expect(row.gate?.checks?.[0]).toMatchObject({ state: "failed", reason: "timeout" });
    expect(await concludedEvents(d.id)).toEqual([
      expect.objectContaining({ state: "failed", reason: "timeout" }),
    ]);
  });
});

/** `n` waiting deployments of `w`'s environment, oldest first. */
async function madeWaiting(w: { environmentId: string; stack: { id: string } }, n: number) {
  const made: string[] = [];
  for (let i = 0; i < n; i++) made.push((await engineCreateOk(w.environmentId, [w.stack.id])).id);
  return made;
}

const allReleased = (ids: string[]) =>
  until("every one released", async () =>
    (await Promise.all(ids.map(rowOf))).every((row) => row.status === "queued"),
  );

/**
 * Has the gate object of `environmentId`, with `gateEnv` for its bindings, settle `deploymentIds`
 * (their check `soak` overdue) due together, in their order; runs `settled` meanwhile.
 */
async function settledTogether(
  environmentId: string,
  deploymentIds: string[],
  gateEnv: Env,
  settled: () => Promise<void>,
) {
  const gate = env.ENVIRONMENT_GATES.get(env.ENVIRONMENT_GATES.idFromName(environmentId));
  await runInDurableObject(gate, (instance: EnvironmentGate) => {
    (instance as unknown as { env: Env }).env = gateEnv;
  });
  try {
    for (const id of deploymentIds) {
      await dueIn(id, "soak", -1_000);
      await scheduleSettle(environmentId, id, Date.now() + 3_600_000);
    }
    // All due at once, a millisecond apart in their order: one alarm finds them all.
    await runInDurableObject(gate, async (_: EnvironmentGate, state) => {
      const now = Date.now();
      for (const [i, id] of deploymentIds.entries()) {
        state.storage.sql.exec("UPDATE timers SET at = ? WHERE deployment_id = ?", now - 1_000 + i, id);
      }
      await state.storage.setAlarm(now);
    });
    await settled();
  } finally {
    await runInDurableObject(gate, (instance: EnvironmentGate) => {
      (instance as unknown as { env: Env }).env = env;
    });
  }
}

/** The reason of a deployment's own `cancelled` timeline entry. */
async function cancelReason(deploymentId: string) {
  const entry = await env.DB.prepare(
    "SELECT status_reason FROM deployment_timeline WHERE deployment_id = ? AND stack_id IS NULL AND status = 'cancelled'",
  )
    .bind(deploymentId)
    .first<{ status_reason: string }>();
  return entry?.status_reason;
}

/** The environment's concurrency policy set to `supersede` in D1, as a protection PUT would. */
async function supersedeNow(environmentId: string) {
  await env.DB.prepare(
    "UPDATE environment_protections SET concurrency = 'supersede' WHERE environment_id = ?",
  )
    .bind(environmentId)
    .run();
}
