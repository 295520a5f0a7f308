/** The event log's retention (API_CONTRACT §13): the daily cron deletes events older than 30 days, in bounded batches. */
import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../src/context";
import { deliveryAttempts, events, webhookDeliveries } from "../../src/db/schema";
import { newId } from "../../src/lib/ids";
import { purgeOldEvents } from "../../src/services/events/log";
import { RETENTION_CRON, runCron } from "../helpers/cron";
import { createOwnedProject, unique } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";
import { DAY_MS, db, integrate, writeDelivery, writeEvent } from "../helpers/webhooks";

/** The daily cron of wrangler.toml (src/index.ts dispatches retention on it). */

describe("retention: the daily cron", () => {
  // The cron logs a summary of each run.
  captureLogs("log");
  async function world() {
    const { project } = await createOwnedProject();
    const integration = await integrate(project.id, `https://hooks.example.com/${unique("ret")}`, {
      changelog: true,
    });
    const make = async (ageDays: number) => {
      const event = await writeEvent(project.id, "changelog.created", {}, ageDays * DAY_MS);
      const deliveryId = await writeDelivery(project.id, event.id, integration.id, {
        status: "succeeded",
        at: event.createdAt,
      });
      await db
        .insert(deliveryAttempts)
        .values({
          id: newId(),
          deliveryId,
          attempt: 1,
          statusCode: 200,
          durationMs: 3,
          createdAt: event.createdAt,
        })
        .run();
      return { eventId: event.id, deliveryId };
    };
    return { project, make };
  }
  const exists = async (eventIds: string[]) =>
    (await db.select({ id: events.id }).from(events).where(inArray(events.id, eventIds)).all()).map(
      (r) => r.id,
    );

  it("deletes events older than 30 days with their deliveries and attempts, and nothing younger", async () => {
    const { make } = await world();
    const old = [await make(31), await make(45)];
    const young = [await make(29.9), await make(1)];
    await runCron(RETENTION_CRON);
    expect(await exists(old.map((o) => o.eventId))).toEqual([]);
    // Counted once each (D1's `changes` would add the cascaded attempts).
    const ctx = createServiceContext({ env, requestId: "retention-count" });
    const more = [await make(50), await make(51)];
    const counted = await purgeOldEvents(ctx);
    expect(counted).toMatchObject({ deliveries: 2, events: 2, done: true });
    expect(await exists(more.map((o) => o.eventId))).toEqual([]);
    expect((await exists(young.map((o) => o.eventId))).sort()).toEqual(young.map((y) => y.eventId).sort());
    for (const { deliveryId } of old) {
      expect(
        await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).all(),
      ).toEqual([]);
      expect(
        await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId)).all(),
      ).toEqual([]);
    }
    for (const { deliveryId } of young) {
      expect(
        await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, deliveryId)).all(),
      ).toHaveLength(1);
    }
  });

  it("the 5-minute cron deletes no events", async () => {
    const { make } = await world();
    const old = await make(40);
    await runCron();
    expect(await exists([old.eventId])).toEqual([old.eventId]);
  });

  it("works in bounded batches: a run stops at its statement budget and the next continues", async () => {
    const { make } = await world();
    const old = [];
    for (let i = 0; i < 7; i++) old.push(await make(60 + i));
    const ctx = createServiceContext({ env, requestId: "retention-test" });
    // Other files' old events may share the database; run until this world's are gone, each
    // run making at most 3 statements of at most 2 rows.
    const first = await purgeOldEvents(ctx, Date.now(), { batch: 2, maxStatements: 3 });
    expect(first.statements).toBeLessThanOrEqual(3);
    expect(first.done).toBe(false);
    expect(first.deliveries).toBeLessThanOrEqual(4);
    expect(first.events).toBeLessThanOrEqual(2);
    let runs = 1;
    let last = first;
    while (!last.done && runs < 100) {
      last = await purgeOldEvents(ctx, Date.now(), { batch: 2, maxStatements: 3 });
      expect(last.statements).toBeLessThanOrEqual(3);
      runs++;
    }
    expect(last.done).toBe(true);
    expect(runs).toBeGreaterThan(3);
    expect(await exists(old.map((o) => o.eventId))).toEqual([]);
  });
});
