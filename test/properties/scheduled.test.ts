/**
 * The cron: events committed but never handed to the queue are fanned out even when the queue is
 * idle; one step that fails holds up none of the steps after it.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { caughtUp, createStream, receiverBucket } from "../helpers/audit-streams";
import { runCron, SWEEP_CRON } from "../helpers/cron";
import { createOrgWithOwnerIn } from "../helpers/databases";
import { createOrgWithOwner, createProject, unique } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";
import {
  allowTheLocalReceiver,
  deliveryRow,
  eventually,
  hook,
  integrate,
  received,
  writeDelivery,
  writeEvent,
} from "../helpers/webhooks";

allowTheLocalReceiver();

const enqueuedAt = async (id: string) =>
  (
    await env.DB.prepare("SELECT enqueued_at FROM events WHERE id = ?")
      .bind(id)
      .first<{ enqueued_at: string | null }>()
  )?.enqueued_at;

it("the scheduled handler sweeps stale unpublished events and leaves fresh ones", async () => {
  const { owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const insert = (id: string, createdAt: string) =>
    env.DB.prepare(
      "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) VALUES (?, ?, ?, ?, NULL, ?)",
    )
      .bind(id, project.id, "changelog.created", JSON.stringify({ project_id: project.id }), createdAt)
      .run();
  const staleId = `stale${crypto.randomUUID().replace(/-/g, "").slice(0, 17)}`;
  const freshId = `fresh${crypto.randomUUID().replace(/-/g, "").slice(0, 17)}`;
  await insert(staleId, new Date(Date.now() - 10 * 60_000).toISOString());
  await insert(freshId, new Date().toISOString());

  await runCron();

  expect(await enqueuedAt(staleId)).toBeTruthy();
  expect(await enqueuedAt(freshId)).toBeNull();
});

describe("a step that fails", () => {
  const errors = captureLogs("error");

  it("holds up none after it (an audit stream's object that will not answer): stuck deliveries are still handed over; the run then fails", async () => {
    const { owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    // A stream behind its log: caught up, then set back, so the sweep wakes it.
    const stream = await createStream(owner, receiverBucket().url);
    await caughtUp(owner, stream.id);
    await env.DB.prepare("UPDATE audit_streams SET delivered_through = 0 WHERE id = ?").bind(stream.id).run();
    // A delivery pending since ten minutes ago that no lane holds: only the sweep hands it over.
    const bucket = unique("cron");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, {
      nextAttemptAt: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    // Every stream object's wake-up refused (injected through the binding).
    const refusing = {
      idFromName: (name: string) => env.AUDIT_STREAMS.idFromName(name),
      get: () => ({ wake: () => Promise.reject(new Error("overloaded (injected)")) }),
    } as unknown as Env["AUDIT_STREAMS"];
    await expect(runCron(SWEEP_CRON, { ...env, AUDIT_STREAMS: refusing })).rejects.toThrow(
      /cron run failed on DB\b/,
    );
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({ msg: "cron step failed", database: "DB", step: "audit streams" }),
    );
    await eventually(async () => expect((await deliveryRow(deliveryId))?.status).toBe("succeeded"));
    expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([event.id]);
  });
});
