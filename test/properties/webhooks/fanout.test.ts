/**
 * The event pipeline up to a delivery. Fan-out: one committed event becomes one delivery per
 * integration whose flag is on. Never losing an event: the stale-event sweep and the dead-letter
 * consumer.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { EventType } from "../../../src/db/event-types";
import { events, webhookDeliveries } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import { runCron } from "../../helpers/cron";
import { createOwnedProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import {
  allowTheLocalReceiver,
  db,
  eventually,
  hook,
  integrate,
  received,
  runBatch,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("fan-out", () => {
  it("creates one delivery per integration whose flag is on, for each flag combination, once", async () => {
    const { project } = await createOwnedProject();
    const b = {
      failed: unique("a"),
      changelog: unique("b"),
      both: unique("c"),
      off: unique("d"),
      slack: unique("e"),
    };
    const failedOnly = await integrate(project.id, hook(b.failed), { deployments_failed: true });
    const changelogOnly = await integrate(project.id, hook(b.changelog), { changelog: true });
    const both = await integrate(project.id, hook(b.both), { changelog: true, services_ok: true });
    await integrate(project.id, hook(b.off), {});
    const slack = await integrate(project.id, hook(b.slack), { services_ok: true }, "slack");

    const cases: Array<[EventType, string[]]> = [
      ["changelog.created", [changelogOnly.id, both.id]],
      ["service.ok", [both.id, slack.id]],
      ["deployment.failed", [failedOnly.id]],
      ["service.in_alarm", []],
      ["promotion.created", []],
    ];
    const sent = new Map<string, string[]>();
    for (const [type, expected] of cases) {
      const event = await writeEvent(project.id, type, { n: type });
      const first = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
      expect(first.result.explicitAcks).toEqual(first.ids);
      // A redelivered fan-out message: no second row, no second message.
      const again = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
      expect(again.result.explicitAcks).toEqual(again.ids);

      const rows = await db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.eventId, event.id))
        .all();
      expect(rows.map((r) => r.integrationId).sort(), type).toEqual([...expected].sort());
      const stored = await db.select().from(events).where(eq(events.id, event.id)).get();
      expect(stored?.enqueuedAt).toBeTruthy();
      for (const integrationId of expected)
        sent.set(integrationId, [...(sent.get(integrationId) ?? []), event.id]);
    }

    // The delivery messages went through the real queue: each receiver gets its events, once each.
    await eventually(async () => {
      expect((await received(b.failed)).map((r) => r.headers["webhook-id"])).toEqual(sent.get(failedOnly.id));
      expect((await received(b.changelog)).map((r) => r.headers["webhook-id"])).toEqual(
        sent.get(changelogOnly.id),
      );
      expect((await received(b.both)).map((r) => r.headers["webhook-id"]).sort()).toEqual(
        sent.get(both.id)?.sort(),
      );
      expect((await received(b.slack)).map((r) => r.headers["webhook-id"])).toEqual(sent.get(slack.id));
    });
    expect(await received(b.off)).toEqual([]);
    const [slackRequest] = await received(b.slack);
    expect(JSON.parse(slackRequest?.body ?? "{}")).toEqual({
      text: `:large_green_circle: A service is OK (project \`${project.id}\`)`,
    });
  });

  it("an event of a deleted project is acknowledged and dropped", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const run = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }]);
    expect(run.result.explicitAcks).toEqual(run.ids);
  });
});

describe("never losing an event", () => {
  // A dead-lettered fan-out is logged as an error by design; one test causes it on purpose.
  const errors = captureLogs("error");

  it("sweeps events whose fan-out never happened once they are a minute old, and leaves fresh ones", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("swept");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const stale = await writeEvent(project.id, "changelog.created", { title: "lost" }, 2 * 60_000);
    const fresh = await writeEvent(project.id, "changelog.created", { title: "new" });

    // The cron runs the sweep.
    await runCron();
    const staleRow = await db.select().from(events).where(eq(events.id, stale.id)).get();
    expect(staleRow?.enqueuedAt).toBeTruthy();
    const freshRow = await db.select().from(events).where(eq(events.id, fresh.id)).get();
    expect(freshRow?.enqueuedAt).toBeNull();
    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(stale.id);
      expect(
        new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
      ).toBeTruthy();
    });
  });

  it("a dead-lettered fan-out is left for the sweep; a dead-lettered disconnect still completes", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    const run = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }], {
      queue: "deploy-platform-events-dlq",
    });
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect((await db.select().from(events).where(eq(events.id, event.id)).get())?.enqueuedAt).toBeNull();
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({ msg: "fan-out dead-lettered; left to the sweep", event_id: event.id }),
    );

    await env.DB.prepare("UPDATE projects SET connection_status = 'disconnecting' WHERE id = ?")
      .bind(project.id)
      .run();
    await runBatch([{ body: { kind: "project.disconnect", project_id: project.id } }], {
      queue: "deploy-platform-events-dlq",
    });
    const got = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(got.body.connection_status).toBe("disconnected");
  });

  it("project disconnect still completes through the queue", async () => {
    const { owner, project } = await createOwnedProject();
    expect((await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key })).status).toBe(
      204,
    );
    await eventually(async () => {
      const got = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
        key: owner.key,
      });
      expect(got.body.connection_status).toBe("disconnected");
    });
  });
});
