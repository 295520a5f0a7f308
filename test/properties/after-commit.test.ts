/**
 * What follows a committed write is its consequence, not part of it (API_CONTRACT §11: a 5xx
 * changed nothing): a deployment's wait timer the gate object could not take, a `supersede` whose
 * cancels failed, deliveries moved to `pending` that their lane did not take, are logged, and the
 * write still answers its 2xx. Answering 5xx instead would release the Idempotency-Key, and the
 * retry would do it again (a second deployment, a second sending). The failures are injected into
 * the bindings of one request (the gate objects, the lanes, a D1 statement); everything else is the
 * real runtime, and the backstop each failure is left to then does the work.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { failingStatements, request } from "../helpers/api";
import { runCron, supersedeDue } from "../helpers/cron";
import { createCaller, unique } from "../helpers/factories";
import { type Delivery, setupIntegration } from "../helpers/integrations";
import { captureLogs } from "../helpers/logs";
import {
  type Deployment,
  engineCreateOk,
  getProtection,
  lock,
  lockPath,
  protectedWorld,
  readDeployment,
  reviewsPath,
} from "../helpers/protection";
import {
  allowTheLocalReceiver,
  deliveryRow,
  eventually,
  received,
  writeDelivery,
  writeEvent,
} from "../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

/** ENVIRONMENT_GATES whose objects always throw: the gate object reset or unreachable. */
const brokenGates = {
  idFromName: (name: string) => env.ENVIRONMENT_GATES.idFromName(name),
  get: () => ({
    schedule: () => Promise.reject(new Error("Durable Object reset because its code was updated.")),
  }),
} as unknown as Env["ENVIRONMENT_GATES"];

const createIn = (
  key: string,
  environmentId: string,
  headers: Record<string, string>,
  bindings?: Partial<Env>,
) =>
  request<Deployment>("POST", `/v1/environments/${environmentId}/deployments`, {
    key,
    body: { data: { patch: [] } },
    headers,
    ...(bindings ? { bindings } : {}),
  });

const deploymentsIn = async (environmentId: string) =>
  (
    await env.DB.prepare(
      "SELECT id, status FROM deployments WHERE environment_id = ? ORDER BY created_at, id",
    )
      .bind(environmentId)
      .all<{ id: string; status: string }>()
  ).results;

describe("a create's consequences failing after its commit", () => {
  const errors = captureLogs("error");
  captureLogs("warn"); // the cron's summary of what its sweep settled

  /**
   * A keyed create in `w`'s environment with `bindings` broken: 201 all the same, the failure of
   * `what` logged, and a retry with the key replaying the same deployment.
   */
  async function createdDespite(
    w: { owner: { key: string }; environmentId: string },
    bindings: Partial<Env>,
    what: "wait timer" | "supersede",
  ) {
    const headers = { "idempotency-key": unique("key") };
    const res = await createIn(w.owner.key, w.environmentId, headers, bindings);
    expect(res.status, res.raw).toBe(201);
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: `a deployment's ${what} failed after the write; left to its backstop`,
        deployment_id: res.body.id,
      }),
    );
    const retry = await createIn(w.owner.key, w.environmentId, headers);
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body.id]).toEqual([
      201,
      "true",
      res.body.id,
    ]);
    return res.body;
  }

  it("the gate object cannot take the wait timer: 201 waiting, a retry replays it, and the cron releases it", async () => {
    const w = await protectedWorld({ wait_timer: 60 });
    const made = await createdDespite(w, { ENVIRONMENT_GATES: brokenGates }, "wait timer");
    expect(made.status).toBe("waiting");
    expect(await deploymentsIn(w.environmentId)).toEqual([{ id: made.id, status: "waiting" }]);

    // No object holds its timer: two minutes on, the cron's sweep releases it.
    await env.DB.prepare("UPDATE deployments SET gate = json_set(gate, '$.wait_until', ?) WHERE id = ?")
      .bind(new Date(Date.now() - 2 * 60_000).toISOString(), made.id)
      .run();
    await runCron();
    expect((await readDeployment(w.owner, made.id)).status).toBe("queued");
  });

  it("supersede's cancels fail: 201 queued, the older deployment stays, and the cron supersedes it a minute on", async () => {
    const w = await protectedWorld({ concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const made = await createdDespite(
      w,
      { DB: failingStatements('select "concurrency" from "environment_protections"') },
      "supersede",
    );
    expect(made.status).toBe("queued");
    expect(await deploymentsIn(w.environmentId)).toEqual([
      { id: older.id, status: "queued" },
      { id: made.id, status: "queued" },
    ]);

    // Within the minute the cron leaves it to the request; a minute on (with `supersede` in force
    // since before it entered `queued`), it cancels the older deployment as the create would have.
    await runCron();
    expect((await deploymentsIn(w.environmentId)).map((d) => d.status)).toEqual(["queued", "queued"]);
    await supersedeDue(w.environmentId, made.id);
    await runCron();
    expect(await deploymentsIn(w.environmentId)).toEqual([
      { id: older.id, status: "cancelled" },
      { id: made.id, status: "queued" },
    ]);
    const reason = await env.DB.prepare(
      "SELECT status_reason FROM deployment_timeline WHERE deployment_id = ? AND stack_id IS NULL AND status = 'cancelled'",
    )
      .bind(older.id)
      .first<{ status_reason: string }>();
    expect(reason?.status_reason).toBe(`Superseded by deployment ${made.id}.`);
  });

  it("the cron does not supersede what entered queued before the environment turned to supersede", async () => {
    const w = await protectedWorld({});
    const [a, b] = [
      await engineCreateOk(w.environmentId, [w.stack.id]),
      await engineCreateOk(w.environmentId, [w.stack.id]),
    ];
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    for (const d of [a, b]) {
      await env.DB.prepare("UPDATE deployment_timeline SET created_at = ? WHERE deployment_id = ?")
        .bind(ago(3 * 60_000), d.id)
        .run();
    }
    // Turned to supersede after both entered `queued`, over a minute ago: §26 cancels only when a
    // deployment enters `queued`, so both stay.
    const res = await request("PUT", `/v1/environments/${w.environmentId}/protection`, {
      key: w.owner.key,
      body: {
        required_approvals: 0,
        reviewer_role: "owner",
        prevent_self_review: true,
        wait_timer: 0,
        concurrency: "supersede",
      },
    });
    expect(res.status, res.raw).toBe(200);
    await env.DB.prepare(
      "UPDATE environment_protections SET updated_at = ?1, concurrency_since = ?1 WHERE environment_id = ?2",
    )
      .bind(ago(2 * 60_000), w.environmentId)
      .run();
    await runCron();
    expect((await deploymentsIn(w.environmentId)).map((d) => d.status)).toEqual(["queued", "queued"]);
  });
});

/** DELIVERY_LANES whose objects always throw: a lane reset or unreachable. */
const lanesDown = {
  idFromName: (name: string) => env.DELIVERY_LANES.idFromName(name),
  get: () => ({ schedule: () => Promise.reject(new Error("lane unreachable")) }),
} as unknown as Env["DELIVERY_LANES"];

/** As if the delivery had been due `ms` ago: past the sweep's STUCK_DELIVERY_MS. */
const dueAgo = (deliveryId: string, ms: number) =>
  env.DB.prepare("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ?")
    .bind(new Date(Date.now() - ms).toISOString(), deliveryId)
    .run();

describe("deliveries moved to pending that their lane does not take", () => {
  const errors = captureLogs("error");
  captureLogs("warn");

  it("redeliver: 202 pending, a retry replays it (no second series), and the sweep sends it once", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { status: "failed" });
    const redeliver = `${path}/deliveries/${deliveryId}/redeliver`;
    const headers = { "idempotency-key": unique("key") };
    const res = await request<Delivery>("POST", redeliver, {
      key: owner.key,
      headers,
      bindings: { DELIVERY_LANES: lanesDown },
    });
    expect(res.status, res.raw).toBe(202);
    expect(res.body).toMatchObject({ id: deliveryId, status: "pending" });
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "delivery lane did not take deliveries moved to pending; left to the sweep",
        integration_id: integration.id,
      }),
    );
    const retry = await request<Delivery>("POST", redeliver, { key: owner.key, headers });
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", series: 1 });

    await dueAgo(deliveryId, 2 * 60_000);
    await runCron();
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([event.id]);
      expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded", series: 1 });
    });
  });

  it("recover: the count of what moved, and the sweep sends each once", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const since = new Date(Date.now() - 1000).toISOString();
    const written: { event: { id: string }; id: string }[] = [];
    for (let i = 0; i < 3; i++) {
      const event = await writeEvent(project.id, "changelog.created", { i });
      written.push({
        event,
        id: await writeDelivery(project.id, event.id, integration.id, { status: "failed" }),
      });
    }
    const res = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      body: { since },
      bindings: { DELIVERY_LANES: lanesDown },
    });
    expect(res.status, res.raw).toBe(202);
    expect(res.body).toEqual({ queued: 3 });
    // The lanes were down: the deliveries wait for the sweep, not for their lane.
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "delivery lane did not take deliveries moved to pending; left to the sweep",
        integration_id: integration.id,
      }),
    );
    for (const { id } of written) {
      expect(await deliveryRow(id)).toMatchObject({ status: "pending" });
      await dueAgo(id, 2 * 60_000);
    }
    await runCron();
    await eventually(async () => {
      const ids = (await received(bucket)).map((r) => r.headers["webhook-id"]);
      expect(ids.sort()).toEqual(written.map((w) => w.event.id).sort());
    });
  });
});

describe("an unlock whose releases fail after its commit", () => {
  const errors = captureLogs("error");
  captureLogs("warn");

  it("204 (the lock is gone), a retry replays it, and the cron releases what only the lock held", async () => {
    const w = await protectedWorld({});
    await lock(w.owner, w.environmentId);
    const held = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect(held.gate?.blocked_by).toEqual(["lock"]);
    const headers = { "idempotency-key": unique("key") };
    const unlock = (bindings?: Partial<Env>) =>
      request("DELETE", lockPath(w.environmentId), {
        key: w.owner.key,
        headers,
        ...(bindings ? { bindings } : {}),
      });
    const res = await unlock({
      DB: failingStatements(
        'select "id" from "deployments" where ("deployments"."environment_id" = ? and "deployments"."status" = ?)',
      ),
    });
    expect(res.status, res.raw).toBe(204);
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "unlock committed; releasing its deployments failed and is left to the cron",
        environment_id: w.environmentId,
      }),
    );
    const retry = await unlock();
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([204, "true"]);
    expect((await getProtection(w.owner, w.environmentId)).body.locked).toBeNull();
    expect((await readDeployment(w.owner, held.id)).status).toBe("waiting");

    // Within the minute the cron leaves it to the request; a minute after the unlock it releases it.
    await runCron();
    expect((await readDeployment(w.owner, held.id)).status).toBe("waiting");
    await env.DB.prepare("UPDATE environment_protections SET updated_at = ? WHERE environment_id = ?")
      .bind(new Date(Date.now() - 2 * 60_000).toISOString(), w.environmentId)
      .run();
    await runCron();
    const released = await readDeployment(w.owner, held.id);
    expect([released.status, released.gate?.blocked_by]).toEqual(["queued", []]);
  });
});

describe("an approval whose release fails after the review commits", () => {
  const errors = captureLogs("error");
  captureLogs("warn");

  it("200 with the deployment as read, a retry replays it, and the cron releases it a minute on", async () => {
    const w = await protectedWorld({ required_approvals: 1 });
    const reviewer = await createCaller(w.org, "admin");
    const held = await engineCreateOk(w.environmentId, [w.stack.id]);
    const headers = { "idempotency-key": unique("key") };
    const approve = (bindings?: Partial<Env>) =>
      request<Deployment>("POST", reviewsPath(held.id), {
        key: reviewer.key,
        body: { state: "approved" },
        headers,
        ...(bindings ? { bindings } : {}),
      });
    const res = await approve({
      DB: failingStatements('select "locked_at", "concurrency" from "environment_protections"'),
    });
    expect(res.status, res.raw).toBe(200);
    expect([res.body.id, res.body.status]).toEqual([held.id, "waiting"]);
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "review committed; its release or cancel failed and is left to the cron",
        deployment_id: held.id,
      }),
    );
    const retry = await approve();
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([200, "true"]);

    await env.DB.prepare("UPDATE deployment_reviews SET created_at = ? WHERE deployment_id = ?")
      .bind(new Date(Date.now() - 2 * 60_000).toISOString(), held.id)
      .run();
    await runCron();
    expect((await readDeployment(w.owner, held.id)).status).toBe("queued");
  });
});
