/**
 * API_CONTRACT §31: every step of a gate writes its event (flag `deployment_gates`, the eighth,
 * `false` unless set), in the same atomic step as its change, delivered and logged like every
 * event; the event lists' `type` filter takes these types.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { once, request } from "../../helpers/api";
import { checkedWorld, conclude, deploymentEvents, dueIn, scheduleSettle } from "../../helpers/checks";
import { createCaller, unique } from "../../helpers/factories";
import { approve, type Deployment, engineCreateOk, lock, rowOf, unlock } from "../../helpers/protection";
import { sleep, until } from "../../helpers/wait";
import { allowTheLocalReceiver, eventually, hook, integrate, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

const GATE_EVENTS = [
  "environment.locked",
  "deployment.waiting",
  "environment.unlocked",
  "deployment.reviewed",
  "deployment.check_concluded",
  "deployment.released",
];

type Delivered = { type: string; data: Record<string, unknown> & { deployment?: Record<string, unknown> } };

describe("gate events", () => {
  it("one for every step, to integrations with deployment_gates on (and none to one without), signed, in the event log", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "fail" }], {
      required_approvals: 1,
    });
    const on = unique("gates");
    const off = unique("no-gates");
    const gates = await integrate(w.project.id, hook(on), { deployment_gates: true });
    await integrate(w.project.id, hook(off), {
      deployments_failed: true,
      deployments_in_progress: true,
      deployments_succeeded: true,
      changelog: true,
      promotions: true,
      services_in_alarm: true,
      services_ok: true,
    });
    const reviewer = await createCaller(w.org, "admin");
    await lock(w.owner, w.environmentId, "freeze");
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await unlock(w.owner, w.environmentId);
    await approve(reviewer, d.id);
    const released = await conclude(w.owner, d.id, "e2e", { conclusion: "passed", summary: "green" });
    expect(released.body.status).toBe("queued");

    let got: Delivered[] = [];
    await eventually(async () => {
      const requests = await received(on);
      got = requests.map((r) => new Webhook(gates.signing_secret).verify(r.body, r.headers) as Delivered);
      expect(got.map((e) => e.type).sort()).toEqual([...GATE_EVENTS].sort());
    });
    const of = (type: string) => got.find((e) => e.type === type)?.data ?? {};
    expect(of("environment.locked")).toMatchObject({
      project_id: w.project.id,
      environment_id: w.environmentId,
      protection: { locked: { reason: "freeze" } },
    });
    expect(of("environment.unlocked")).toMatchObject({
      environment_id: w.environmentId,
      protection: { locked: null },
    });
    expect(of("deployment.waiting").deployment).toMatchObject({
      id: d.id,
      status: "waiting",
      gate: { blocked_by: ["approval", "lock", "check"], checks: [{ name: "e2e", state: "pending" }] },
    });
    // Each `deployment` is the record as its step left it: what the request answered.
    expect(of("deployment.reviewed")).toMatchObject({
      deployment: { id: d.id, status: "waiting", gate: { approvals: 1, blocked_by: ["check"] } },
      review: {
        account_id: reviewer.accountId,
        state: "approved",
        comment: null,
        created_at: expect.any(String),
      },
    });
    expect(of("deployment.check_concluded")).toMatchObject({
      deployment: {
        id: d.id,
        status: "queued",
        gate: { blocked_by: [], checks: [{ name: "e2e", state: "passed" }] },
      },
      check: { name: "e2e", state: "passed", reason: null, summary: "green" },
    });
    expect(of("deployment.released").deployment).toMatchObject({
      id: d.id,
      status: "queued",
      gate: { blocked_by: [] },
    });
    // Not one reached the integration without the flag.
    await sleep(500);
    expect((await received(off)).map((r) => JSON.parse(r.body).type)).toEqual([]);

    const log = await request<{ data: { type: string }[] }>(
      "GET",
      `/v1/projects/${w.project.id}/events?type=deployment.waiting,deployment.released&type=environment.locked`,
      { key: w.owner.key },
    );
    expect(log.status, log.raw).toBe(200);
    expect(log.body.data.map((e) => e.type).sort()).toEqual(
      ["deployment.released", "deployment.waiting", "environment.locked"].sort(),
    );
  });

  it("a step's event carries the deployment as the request left it: a rejection's and a failed check's say cancelled, an approval's counts itself", async () => {
    const eventOf = async (type: string, deploymentId: string) => {
      const events = await deploymentEvents<{ deployment: Deployment }>(type, deploymentId);
      expect(events).toHaveLength(1);
      return events[0] as { deployment: Deployment };
    };
    const w = await checkedWorld([{ name: "e2e", timeout: 86_400, on_timeout: "fail" }], {
      required_approvals: 2,
    });
    const [first, second] = [await createCaller(w.org, "admin"), await createCaller(w.org, "admin")];

    const rejected = await engineCreateOk(w.environmentId, [w.stack.id]);
    const rejection = await request<Deployment>("POST", `/v1/deployments/${rejected.id}/reviews`, {
      key: first.key,
      body: { state: "rejected" },
    });
    expect(rejection.body.status).toBe("cancelled");
    expect((await eventOf("deployment.reviewed", rejected.id)).deployment).toEqual(rejection.body);

    const counted = await engineCreateOk(w.environmentId, [w.stack.id]);
    const one = await approve(first, counted.id);
    expect((await eventOf("deployment.reviewed", counted.id)).deployment).toMatchObject({
      status: "waiting",
      gate: { approvals: 1, blocked_by: ["approval", "check"] },
    });
    expect(one.status).toBe("waiting");
    const failed = await conclude(second, counted.id, "e2e", { conclusion: "failed" });
    expect(failed.body.status).toBe("cancelled");
    expect((await eventOf("deployment.check_concluded", counted.id)).deployment).toEqual(failed.body);

    // Failed by its timeout: the event says cancelled too.
    const timed = await engineCreateOk(w.environmentId, [w.stack.id]);
    const at = await dueIn(timed.id, "e2e", 100);
    await scheduleSettle(w.environmentId, timed.id, Date.parse(at));
    await until("cancelled", async () => (await rowOf(timed.id)).status === "cancelled");
    await until("its event published", async () => {
      const { results } = await env.DB.prepare(
        "SELECT enqueued_at FROM events WHERE type = 'deployment.check_concluded' AND json_extract(data, '$.deployment.id') = ?",
      )
        .bind(timed.id)
        .all<{ enqueued_at: string | null }>();
      return results[0]?.enqueued_at != null;
    });
    expect((await eventOf("deployment.check_concluded", timed.id)).deployment).toMatchObject({
      status: "cancelled",
      gate: { checks: [{ name: "e2e", state: "failed", reason: "timeout" }] },
    });
  });

  it("a conclusion's event never carries another step's outcome: the timeout of another check its settling meets has its own", async () => {
    // `a` is overdue (its deadline moved into the past in D1, no timer told) when `b` passes: the
    // pass's write leaves the deployment waiting with `a` pending; the settling that follows
    // concludes `a` by its timeout, which cancels (fail) or releases (pass) — that step's event says
    // so, `b`'s says what `b`'s own step left.
    for (const onTimeout of ["fail", "pass"] as const) {
      const w = await checkedWorld([
        { name: "a", timeout: 86_400, on_timeout: onTimeout },
        { name: "b", timeout: 86_400, on_timeout: "fail" },
      ]);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await dueIn(d.id, "a", -1_000);
      const passed = await conclude(w.owner, d.id, "b", { conclusion: "passed" });
      expect(passed.status, passed.raw).toBe(200);
      const outcome = onTimeout === "fail" ? "cancelled" : "queued";
      // The answer is the deployment as it is now.
      expect(passed.body.status).toBe(outcome);
      const concluded = await deploymentEvents<{ deployment: Deployment; check: { name: string } }>(
        "deployment.check_concluded",
        d.id,
      );
      const ofB = concluded.filter((e) => e.check.name === "b");
      const ofA = concluded.filter((e) => e.check.name === "a");
      expect(ofB).toHaveLength(1);
      expect(ofA).toHaveLength(1);
      expect(ofB[0]?.deployment).toMatchObject({
        status: "waiting",
        gate: {
          blocked_by: ["check"],
          checks: [
            { name: "a", state: "pending" },
            { name: "b", state: "passed" },
          ],
        },
      });
      expect(ofA[0]?.deployment).toMatchObject({
        status: outcome,
        gate: {
          checks: [{ name: "a", state: onTimeout === "fail" ? "failed" : "passed", reason: "timeout" }, {}],
        },
      });
    }
    // The same for an approval whose settling meets the overdue check.
    const w = await checkedWorld([{ name: "a", timeout: 86_400, on_timeout: "fail" }], {
      required_approvals: 1,
    });
    const admin = await createCaller(w.org, "admin");
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await dueIn(d.id, "a", -1_000);
    const approved = await approve(admin, d.id);
    expect(approved.status).toBe("cancelled");
    const [reviewed] = await deploymentEvents<{ deployment: Deployment }>("deployment.reviewed", d.id);
    expect(reviewed?.deployment).toMatchObject({
      status: "waiting",
      gate: { checks: [{ name: "a", state: "pending" }] },
    });
  });

  it("a pass's event carries the record its write left, not a lock (or approval) committed between its write and its settling", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const passed = await conclude(
      w.owner,
      d.id,
      "e2e",
      { conclusion: "passed" },
      {
        // The settling after the pass's write (./gate.ts `settleGate`: its read of the lock).
        'select "locked_at", "concurrency" from "environment_protections" where "environment_protections"."environment_id" = (SELECT':
          once(async () => {
            await lock(w.owner, w.environmentId);
          }),
      },
    );
    expect(passed.status, passed.raw).toBe(200);
    // The answer is the deployment as it is now: the lock holds it.
    expect(passed.body.gate?.blocked_by).toEqual(["lock", "check"]);
    const [event] = await deploymentEvents<{ deployment: Deployment }>("deployment.check_concluded", d.id);
    const entry = await env.DB.prepare("SELECT changes FROM audit_log WHERE request_id = ?")
      .bind(passed.headers.get("x-request-id"))
      .first<{ changes: string }>();
    const changes = JSON.parse(entry?.changes ?? "null");
    expect(event?.deployment.gate).toEqual(changes.gate.to);
    expect(event?.deployment.gate?.blocked_by).toEqual(["check"]);
    expect(event?.deployment.updated_at).toBe(changes.updated_at.to);
  });

  it("the integration's configuration has the eighth flag, false unless set", async () => {
    const w = await checkedWorld();
    const created = await integrate(w.project.id, hook(unique("x")), { changelog: true });
    expect(created.configuration).toMatchObject({ changelog: true, deployment_gates: false });
    const updated = await request<{ configuration: Record<string, boolean> }>(
      "PATCH",
      `/v1/projects/${w.project.id}/notification-integrations/${created.id}`,
      { key: w.owner.key, body: { configuration: { deployment_gates: true } } },
    );
    expect(updated.body.configuration).toMatchObject({ changelog: true, deployment_gates: true });
  });
});
