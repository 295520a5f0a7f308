/**
 * A lane's outcomes are group-committed (src/delivery-lane/group-commit.ts): the first goes at
 * once, the ones that end while a batch is out go together in the next; a group whose batch fails
 * is recorded outcome by outcome. Through the real D1 and a real lane.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../../src/context";
import { events } from "../../../src/db/schema";
import { groupCommit } from "../../../src/delivery-lane/group-commit";
import type { DeliveryLane } from "../../../src/delivery-lane/object";
import { scheduleDeliveries } from "../../../src/services/integrations/lane-client";
import { entryOf } from "../../../src/services/integrations/lane-protocol";
import { type OutcomeWrite, recordAlone } from "../../../src/services/integrations/outcomes";
import { onPrimary, recordingD1 } from "../../helpers/d1-trips";
import { createOwnedProject, unique } from "../../helpers/factories";
import {
  allowTheLocalReceiver,
  db,
  eventually,
  hook,
  integrate,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();

/** A write that marks one event (a harmless UPDATE), or, for `broken`, one that violates a NOT NULL. */
const markEvent =
  (eventId: string, broken = false): OutcomeWrite =>
  (d) => [
    broken
      ? d.run(
          sql`INSERT INTO events (id, project_id, type, data, created_at) VALUES (${eventId}, NULL, 'x', '{}', 'x')`,
        )
      : d
          .update(events)
          .set({ enqueuedAt: "2026-01-01T00:00:00.000Z" })
          .where(sql`${events.id} = ${eventId}`),
  ];

const markedAt = async (eventId: string) =>
  (await db.select({ at: events.enqueuedAt }).from(events).where(sql`${events.id} = ${eventId}`).get())?.at;

describe("group commit of a lane's outcomes", () => {
  it("the first outcome goes at once; those that end while its batch is out go together, in one round trip", async () => {
    const { project } = await createOwnedProject();
    const ids = await Promise.all(
      [1, 2, 3, 4].map(async () => (await writeEvent(project.id, "changelog.created")).id),
    );
    const recorded = recordingD1();
    const ctx = () => createServiceContext({ env: recorded.env, requestId: unique("outcome") });
    const record = groupCommit();
    // All four end in the same tick: the first leads alone, the other three wait for it, then go as one.
    const done = await Promise.all(ids.map((id) => record(ctx(), markEvent(id))));
    expect(done.map((d) => d.results.map((r) => r.meta.changes))).toEqual([[1], [1], [1], [1]]);
    expect(onPrimary(recorded.trips).map((trip) => trip.sql.length)).toEqual([1, 3]);
    for (const id of ids) expect(await markedAt(id)).toBe("2026-01-01T00:00:00.000Z");
    // One at a time, nothing waits: a batch each, as without a group.
    const single = recordingD1();
    for (const id of ids)
      await record(createServiceContext({ env: single.env, requestId: unique("o") }), markEvent(id));
    expect(onPrimary(single.trips).map((trip) => trip.sql.length)).toEqual([1, 1, 1, 1]);
  });

  it("a group whose batch fails is recorded outcome by outcome: one that cannot be written takes no other with it", async () => {
    const { project } = await createOwnedProject();
    const [a, b, c] = await Promise.all(
      [1, 2, 3].map(async () => (await writeEvent(project.id, "changelog.created")).id),
    );
    const ctx = () => createServiceContext({ env, requestId: unique("outcome") });
    const record = groupCommit();
    const results = await Promise.allSettled([
      record(ctx(), markEvent(a as string)),
      record(ctx(), markEvent(unique("broken"), true)),
      record(ctx(), markEvent(c as string)),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await markedAt(a as string)).toBe("2026-01-01T00:00:00.000Z");
    expect(await markedAt(c as string)).toBe("2026-01-01T00:00:00.000Z");
    expect(await markedAt(b as string)).toBeNull();
    // Alone, a failure is the caller's to see.
    await expect(recordAlone(ctx(), markEvent(unique("broken"), true))).rejects.toThrow();
  });

  it("a lane whose attempts end together records them in fewer round trips than attempts, each once", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("together");
    // Every answer takes 300 ms: the lane's ten attempts start at once and end within a few ms.
    const integration = await integrate(project.id, hook(bucket, "?delay_ms=300"), { changelog: true });
    const deliveries: string[] = [];
    for (let i = 0; i < 10; i++) {
      const event = await writeEvent(project.id, "changelog.created");
      deliveries.push(
        await writeDelivery(project.id, event.id, integration.id, {
          nextAttemptAt: new Date().toISOString(),
        }),
      );
    }
    const lanes = env.DELIVERY_LANES;
    const lane = lanes.get(lanes.idFromName(integration.id));
    const recorded = recordingD1();
    await runInDurableObject(lane, (object: DeliveryLane) => {
      (object as unknown as { env: Env }).env = recorded.env;
    });
    const ctx = createServiceContext({ env, requestId: unique("schedule") });
    await scheduleDeliveries(
      ctx,
      integration.id,
      deliveries.map((id) => entryOf(id, 0)),
    );
    await eventually(async () => expect(await received(bucket)).toHaveLength(10));
    await eventually(async () => {
      const rows = await env.DB.prepare(
        `SELECT status, attempts, (SELECT count(*) FROM delivery_attempts a WHERE a.delivery_id = d.id) AS n
         FROM webhook_deliveries d WHERE integration_id = ?`,
      )
        .bind(integration.id)
        .all<{ status: string; attempts: number; n: number }>();
      expect(rows.results).toHaveLength(10);
      expect(rows.results.every((r) => r.status === "succeeded" && r.attempts === 1 && r.n === 1)).toBe(true);
    });
    const outcomeTrips = onPrimary(recorded.trips).filter((trip) =>
      trip.sql.some((q) => /^update "webhook_deliveries"/i.test(q)),
    );
    const outcomes = outcomeTrips.flatMap((trip) =>
      trip.sql.filter((q) => /^update "webhook_deliveries"/i.test(q)),
    );
    expect(outcomes).toHaveLength(10);
    expect(outcomeTrips.length).toBeLessThan(10);
  });
});
