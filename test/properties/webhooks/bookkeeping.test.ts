/**
 * The webhook bookkeeping's D1 work (docs/capacity.md, "D1 primary (writes)"): which session each
 * step starts from and how many of its round trips reach the primary, for a fan-out
 * (src/services/events/fanout.ts, from src/consumer.ts) and a delivery's attempt
 * (src/services/integrations/attempts.ts, from src/delivery-lane/object.ts); and that neither loses a
 * delivery or sends one twice when a step dies or a replica is behind. Real D1, the real queue
 * consumer, real DeliveryLane objects, real HTTP to the local receiver.
 */
import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { events } from "../../../src/db/schema";
import type { DeliveryLane } from "../../../src/delivery-lane/object";
import type { EventFanoutMessage } from "../../../src/services/events/queue";
import { sweepStuckDeliveries } from "../../../src/services/integrations/sweep";
import { serviceContext } from "../../helpers/context";
import { bookmarkOfHeader, onPrimary, recordingD1, writes } from "../../helpers/d1-trips";
import { createOwnedProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import {
  allowTheLocalReceiver,
  db,
  deliveriesOfEvent,
  eventually,
  hook,
  integrate,
  laneEntries,
  laneOf,
  received,
  runBatch,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();
// A hand-over that fails and a failing receiver are logged by design; these tests cause them.
captureLogs("error", "all");
const warnings = captureLogs("warn", "all");

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/**
 * The internal events endpoint through `createApp().fetch`, its EVENTS messages kept here rather
 * than sent (the test runs them through the consumer itself, nothing else fans the event out).
 */
async function emitRecorded(projectId: string) {
  const messages: unknown[] = [];
  const queue = {
    send: (body: unknown) => {
      messages.push(body);
      return Promise.resolve();
    },
  };
  const exec = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`http://api.test/internal/v1/projects/${projectId}/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "changelog.created", data: { title: "bookkeeping" } }),
    }),
    { ...env, EVENTS: queue as unknown as Queue },
    exec,
  );
  const body = await res.json<{ id: string }>();
  await waitOnExecutionContext(exec);
  expect(res.status).toBe(202);
  // The header names its database and carries a MAC (src/crypto/bookmarks.ts): the bookmark itself
  // is what the message carries.
  const header = res.headers.get("x-d1-bookmark");
  expect(header).toMatch(/^DB:/);
  return { id: body.id, bookmark: bookmarkOfHeader(header), messages };
}

/** Runs the integration's lane on a recording D1 binding from now on (the real object, its D1 calls recorded). */
async function recordLane(integrationId: string) {
  const recorded = recordingD1();
  await runInDurableObject(laneOf(integrationId), (lane: DeliveryLane) => {
    (lane as unknown as { env: Env }).env = recorded.env;
  });
  return recorded;
}

const marked = async (eventId: string) =>
  (await db.select().from(events).where(eq(events.id, eventId)).get())?.enqueuedAt ?? null;

describe("a fan-out", () => {
  it("is published with its write's bookmark, reads from it (a replica), and makes one round trip on the primary: the rows and the mark in one batch", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("bk");
    const integration = await integrate(project.id, hook(bucket, "?status=500"), { changelog: true });
    await integrate(project.id, hook(unique("bk-off")), {});
    const second = await integrate(project.id, hook(unique("bk-2"), "?status=500"), { changelog: true });

    const emitted = await emitRecorded(project.id);
    expect(emitted.bookmark).toMatch(BOOKMARK);
    expect(emitted.messages).toEqual([
      { kind: "event.fanout", event_id: emitted.id, bookmark: emitted.bookmark, database: "DB" },
    ]);

    const lane = await recordLane(integration.id);
    const consumer = recordingD1();
    const message = emitted.messages[0] as EventFanoutMessage;
    const run = await runBatch([{ body: message }], { env: consumer.env });
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(consumer.starts).toEqual([emitted.bookmark]);
    expect(consumer.trips.map((t) => (writes(t) ? "batch" : "read"))).toEqual(["read", "batch"]);
    expect(onPrimary(consumer.trips)).toHaveLength(1);
    // The batch: one insert of both rows, the event's mark, the read of what is still to send.
    expect(onPrimary(consumer.trips)[0]?.sql).toHaveLength(3);
    expect(await marked(emitted.id)).toBeTruthy();
    expect((await deliveriesOfEvent(emitted.id)).map((d) => d.integrationId).sort()).toEqual(
      [integration.id, second.id].sort(),
    );

    // The attempt: its first read from the fan-out batch's bookmark (at least the event's), the
    // outcome on the primary: one round trip there.
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    await eventually(async () => expect(lane.trips).toHaveLength(2));
    const [read, outcome] = lane.trips;
    expect(lane.starts).toHaveLength(1);
    const start = lane.starts[0] as string;
    expect(start).toMatch(BOOKMARK);
    expect(start > (emitted.bookmark as string)).toBe(true);
    expect(read?.start).toBe(start);
    expect(read && writes(read)).toBe(false);
    expect(outcome && writes(outcome)).toBe(true);
    expect(onPrimary(lane.trips)).toEqual([outcome]);
    // The failed attempt's retry will read from its outcome's bookmark.
    await eventually(async () => {
      const [entry] = await laneEntries(integration.id);
      expect(entry?.tries).toBe(1);
      expect(entry?.bookmark && entry.bookmark > start).toBe(true);
    });
  });

  it("without a bookmark (sent by hand, or before it was carried), or retried, starts on the primary as before", async () => {
    const { project } = await createOwnedProject();
    await integrate(project.id, hook(unique("bk-hand")), { changelog: true });
    const byHand = await writeEvent(project.id, "changelog.created");
    const consumer = recordingD1();
    await runBatch([{ body: { kind: "event.fanout", event_id: byHand.id } }], { env: consumer.env });
    expect(consumer.starts).toEqual(["first-primary"]);

    const emitted = await emitRecorded(project.id);
    const retried = recordingD1();
    const run = await runBatch([{ body: emitted.messages[0] as EventFanoutMessage, attempts: 2 }], {
      env: retried.env,
    });
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(retried.starts).toEqual(["first-primary"]);
    const garbage = recordingD1();
    await runBatch([{ body: { kind: "event.fanout", event_id: byHand.id, bookmark: "not-a-bookmark" } }], {
      env: garbage.env,
    });
    expect(garbage.starts).toEqual(["first-primary"]);
  });

  it("that dies between its batch and the hand-over loses no delivery: the message comes back and hands it over; past the queue, the sweep does", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("bk-crash");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const lanesDown = {
      idFromName: (name: string) => env.DELIVERY_LANES.idFromName(name),
      get: () => ({
        schedule: () => Promise.reject(new Error("lane unreachable")),
      }),
    } as unknown as Env["DELIVERY_LANES"];

    const crashes = async () => {
      const emitted = await emitRecorded(project.id);
      const message = emitted.messages[0] as EventFanoutMessage;
      const first = await runBatch([{ body: message }], { env: { ...env, DELIVERY_LANES: lanesDown } });
      expect(first.result.retryMessages.map((r) => r.msgId)).toEqual(first.ids);
      // The batch committed: the rows and the mark. No lane holds the delivery.
      expect(await marked(emitted.id)).toBeTruthy();
      const [delivery] = await deliveriesOfEvent(emitted.id);
      expect(delivery?.status).toBe("pending");
      expect(await laneEntries(integration.id)).toEqual([]);
      return { emitted, message, deliveryId: delivery?.id as string };
    };

    // The queue hands the message back (a later attempt): though the event is marked, its
    // pending delivery is handed over again. A row that batch did not write goes without a
    // bookmark: its lane may have sent it meanwhile, so its attempt reads the primary.
    const retried = await crashes();
    const lane = await recordLane(integration.id);
    // An integration made since the event gets no delivery of it from the retry: the rows were
    // written with the mark, so the retry writes nothing, it only hands over.
    const later = await integrate(project.id, hook(unique("bk-later")), { changelog: true });
    const again = await runBatch([{ body: retried.message, attempts: 2 }]);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect((await deliveriesOfEvent(retried.emitted.id)).map((d) => d.integrationId)).not.toContain(later.id);
    await eventually(async () =>
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([retried.emitted.id]),
    );
    await eventually(async () => expect(lane.trips).toHaveLength(2));
    expect(lane.starts).toEqual(["first-primary"]);

    // A message the queue gave up on: the stale-event sweep does not take a marked event, the
    // stuck-delivery sweep (the cron's, run by hand a little over a minute later) delivers it.
    const lost = await crashes();
    const swept = await sweepStuckDeliveries(serviceContext(), Date.now() + 61_000);
    expect(swept.taken).toBeGreaterThanOrEqual(1);
    await eventually(async () =>
      expect((await received(bucket)).map((r) => r.headers["webhook-id"]).sort()).toEqual(
        [retried.emitted.id, lost.emitted.id].sort(),
      ),
    );
    await eventually(async () => {
      const [delivery] = await deliveriesOfEvent(lost.emitted.id);
      expect(delivery?.status).toBe("succeeded");
    });
  });

  it("run again on a replica that does not show the mark yet writes no second row and sends nothing twice", async () => {
    const { project } = await createOwnedProject();
    const slow = unique("bk-stale");
    const integration = await integrate(project.id, hook(slow, "?status=500"), { changelog: true });
    const emitted = await emitRecorded(project.id);
    const message = emitted.messages[0] as EventFanoutMessage;
    await runBatch([{ body: message }]);
    await eventually(async () => expect((await laneEntries(integration.id))[0]?.tries).toBe(1));
    const [delivery] = await deliveriesOfEvent(emitted.id);

    // What a replica behind the mark shows: the event not yet marked.
    await db.update(events).set({ enqueuedAt: null }).where(eq(events.id, emitted.id)).run();
    const redundant = await runBatch([{ body: message }]);
    expect(redundant.result.explicitAcks).toEqual(redundant.ids);
    expect((await deliveriesOfEvent(emitted.id)).map((d) => d.id)).toEqual([delivery?.id]);
    // The lane already held it in that series: still its one entry, one attempt made.
    expect(await laneEntries(integration.id)).toEqual([
      expect.objectContaining({ deliveryId: delivery?.id, series: 0, tries: 1 }),
    ]);
    expect(await received(slow)).toHaveLength(1);
    expect(await marked(emitted.id)).toBeTruthy();
  });

  it("whose replica read raced a deletion (its batch refused by a foreign key) settles it at once on the primary", async () => {
    const { project } = await createOwnedProject();
    const kept = unique("bk-kept");
    const stays = await integrate(project.id, hook(kept), { changelog: true });
    const gone = await integrate(project.id, hook(unique("bk-gone")), { changelog: true });
    const emitted = await emitRecorded(project.id);
    // The integration is deleted on the primary after the replica read showed it: just before the
    // fan-out's batch.
    const starts: string[] = [];
    let deleted = false;
    const DB = {
      withSession: (start: string) => {
        starts.push(start);
        const session = env.DB.withSession(start);
        return {
          prepare: (query: string) => session.prepare(query),
          batch: async (statements: D1PreparedStatement[]) => {
            if (!deleted) {
              deleted = true;
              await env.DB.prepare("DELETE FROM notification_integrations WHERE id = ?").bind(gone.id).run();
            }
            return session.batch(statements);
          },
          getBookmark: () => session.getBookmark(),
        };
      },
    } as unknown as D1Database;
    const run = await runBatch([{ body: emitted.messages[0] as EventFanoutMessage }], {
      env: { ...env, DB },
    });
    expect(run.result.explicitAcks).toEqual(run.ids);
    expect(starts).toEqual([emitted.bookmark, "first-primary"]);
    expect(warnings.lines()).toContainEqual(
      expect.objectContaining({
        msg: "fan-out from a replica failed; again on the primary",
        event_id: emitted.id,
      }),
    );
    expect((await deliveriesOfEvent(emitted.id)).map((d) => d.integrationId)).toEqual([stays.id]);
    await eventually(async () => expect(await received(kept)).toHaveLength(1));
    expect(await marked(emitted.id)).toBeTruthy();
  });
});

describe("a lane's attempt", () => {
  it("that fails on its bookmark (a replica that cannot serve it, say) retries from the primary, and then sends", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("bk-fail");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const emitted = await emitRecorded(project.id);
    // The lane's D1: a session from a bookmark fails; one from the primary works.
    const starts: string[] = [];
    await runInDurableObject(laneOf(integration.id), (lane: DeliveryLane) => {
      const DB = {
        withSession: (start: string) => {
          starts.push(start);
          if (start.startsWith("first-")) return env.DB.withSession(start);
          throw new Error("D1_ERROR: bookmark not available");
        },
      };
      (lane as unknown as { env: Env }).env = { ...env, DB: DB as unknown as D1Database };
    });
    const run = await runBatch([{ body: emitted.messages[0] as EventFanoutMessage }]);
    expect(run.result.explicitAcks).toEqual(run.ids);
    await eventually(async () => {
      const [entry] = await laneEntries(integration.id);
      expect(entry?.tries).toBe(1);
      expect(entry?.bookmark).toBeNull();
    });
    expect(starts).toEqual([expect.stringMatching(BOOKMARK)]);
    // The retry, from the primary, sends it (its due time brought to now).
    await runInDurableObject(laneOf(integration.id), async (lane: DeliveryLane, state) => {
      state.storage.sql.exec("UPDATE lane SET due_at = ?", Date.now());
      await lane.alarm();
    });
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    expect(starts.slice(1)).toEqual(["first-primary"]);
  });
});

describe("a lane's storage", () => {
  it("an object made before entries carried a bookmark gets the column: its old entries read the primary, their retries from their outcome's bookmark", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("bk-old");
    const integration = await integrate(project.id, hook(bucket, "?status=500"), { changelog: true });
    const event = await writeEvent(project.id, "changelog.created");
    // The delivery row as a fan-out wrote it, held by a lane whose table has no bookmark column.
    const lane = await recordLane(integration.id);
    const run = await runBatch([{ body: { kind: "event.fanout", event_id: event.id } }], {
      env: {
        ...env,
        DELIVERY_LANES: { idFromName: () => undefined, get: () => ({ schedule: () => 0 }) } as never,
      },
    });
    expect(run.result.explicitAcks).toEqual(run.ids);
    const [delivery] = await deliveriesOfEvent(event.id);
    await runInDurableObject(laneOf(integration.id), (_lane: DeliveryLane, state) => {
      state.storage.sql.exec(`CREATE TABLE lane (
        delivery_id TEXT PRIMARY KEY, series INTEGER NOT NULL, manual INTEGER NOT NULL,
        tries INTEGER NOT NULL, due_at INTEGER NOT NULL)`);
      state.storage.sql.exec(
        "INSERT INTO lane (delivery_id, series, manual, tries, due_at) VALUES (?, 0, 0, 0, ?)",
        delivery?.id,
        Date.now(),
      );
    });
    // A hand-over wakes the lane (an entry it holds is not taken twice).
    expect(
      await laneOf(integration.id).schedule([
        { deliveryId: delivery?.id as string, series: 0, manual: false },
      ]),
    ).toBe(0);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    await eventually(async () => expect(lane.trips).toHaveLength(2));
    expect(lane.starts).toEqual(["first-primary"]);
    await eventually(async () =>
      expect(await laneEntries(integration.id)).toEqual([
        expect.objectContaining({
          deliveryId: delivery?.id,
          tries: 1,
          bookmark: expect.stringMatching(BOOKMARK),
        }),
      ]),
    );
  });
});
