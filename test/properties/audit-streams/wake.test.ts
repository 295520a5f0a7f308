/**
 * API_CONTRACT §30, what wakes a stream: each request that writes an entry wakes its organization's
 * streams itself, once it committed, not through the EVENTS queue, which every organization's
 * event fan-outs share (one organization's burst must not hold another's entries up). A wake-up
 * that fails goes on the queue as an `audit.streams` message; the consumer wakes that
 * organization's streams once for all the messages of a batch (one read of its streams),
 * acknowledges them together, and still wakes every organization the batch names. Through the
 * Worker, its queue handler, a recording D1 binding, the streams' objects and the local receiver.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { AuditStream } from "../../../src/audit-stream/object";
import { auditEntry } from "../../../src/services/audit/entry";
import type { AuditStreamsMessage } from "../../../src/services/events/queue";
import { request } from "../../helpers/api";
import {
  caughtUp,
  createStream,
  eventually,
  readStream,
  receiverBucket,
  sequencesReceived,
} from "../../helpers/audit-streams";
import { serviceContext } from "../../helpers/context";
import { recordingD1 } from "../../helpers/d1-trips";
import { createOrgWithOwner } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { sleep } from "../../helpers/wait";
import { allowTheLocalReceiver, runBatch } from "../../helpers/webhooks";

allowTheLocalReceiver();
// A wake-up that fails is logged by design; the second test causes one on purpose.
captureLogs("warn", "all");

const wake = (orgId: string): { body: AuditStreamsMessage } => ({
  body: { kind: "audit.streams", org_id: orgId, database: "DB" },
});
const readsOfStreams = (trips: { sql: string[] }[]) =>
  trips.filter((trip) => trip.sql.some((query) => /from "audit_streams"/i.test(query)));

describe("waking an organization's streams from the request", () => {
  it("a write's entry reaches the receiver with the EVENTS queue refusing every message: the request wakes the stream itself", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    // Its own creation's entry out first, so what follows is the write's alone.
    await caughtUp(owner, stream.id);
    const refused = vi.fn(async () => {
      throw new Error("queue unavailable");
    });
    const queue = { ...env.EVENTS, send: refused, sendBatch: refused };
    const created = await request<{ id: string }>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "woken-directly" },
      bindings: { EVENTS: queue as unknown as Queue },
    });
    expect(created.status, created.raw).toBe(201);
    const read = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      5000,
    );
    expect(read.pending).toBe(0);
    expect((await sequencesReceived(bucket)).at(-1)).toBe(read.delivered_through);
    expect(refused).not.toHaveBeenCalled();
  });

  it("every committed entry wakes the streams: a context's second entry, written after the stream sent its first, reaches the receiver too", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    await caughtUp(owner, stream.id);
    const ctx = serviceContext({}, "auditWakeTest");
    const write = async () => {
      const id = `al_wake${crypto.randomUUID().slice(0, 8)}`;
      await ctx.db.batch([
        auditEntry(ctx, { orgId: owner.orgId, target: { type: "test", id }, when: "always" }),
      ]);
      return id;
    };
    await write();
    const first = await caughtUp(owner, stream.id, 5000);
    expect(first.pending).toBe(0);
    await write();
    const second = await caughtUp(owner, stream.id, 5000);
    expect(second.pending).toBe(0);
    expect(second.delivered_through).toBe(first.delivered_through + 1);
    expect((await sequencesReceived(bucket)).at(-1)).toBe(second.delivered_through);
  });

  it("a wake-up that fails goes on the queue as `audit.streams`, whose consumer wakes the stream", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    // Its creation's own entry sent first: what is pending below is the project's alone.
    const before = await caughtUp(owner, stream.id);
    const broken = {
      idFromName: (name: string) => env.AUDIT_STREAMS.idFromName(name),
      get: () => ({
        wake: async () => {
          throw new Error("object unreachable");
        },
      }),
    };
    const sent: unknown[] = [];
    const queue = {
      ...env.EVENTS,
      send: async (body: unknown) => {
        sent.push(body);
      },
    };
    const created = await request("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "woken-by-the-queue" },
      bindings: {
        AUDIT_STREAMS: broken as unknown as Env["AUDIT_STREAMS"],
        EVENTS: queue as unknown as Queue,
      },
    });
    expect(created.status, created.raw).toBe(201);
    expect(sent).toEqual([{ kind: "audit.streams", org_id: owner.orgId, database: "DB" }]);
    const run = await runBatch(sent.map((body) => ({ body: body as AuditStreamsMessage })));
    expect(run.result.explicitAcks).toEqual(run.ids);
    const read = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
      5000,
    );
    expect(read.delivered_through).toBe(before.delivered_through + 1);
    expect((await sequencesReceived(bucket)).at(-1)).toBe(read.delivered_through);
  });
});

describe("waking an organization's streams from the queue", () => {
  it("a batch's messages for one organization read its streams once, are all acknowledged, and every organization's streams send", async () => {
    const [a, b] = [await createOrgWithOwner(), await createOrgWithOwner()];
    const [inA, inB] = [receiverBucket(), receiverBucket()];
    // `from: start`: each stream has at least its own creation's entry to send once woken.
    const streamA = await createStream(a.owner, inA.url, { from: "start" });
    const streamB = await createStream(b.owner, inB.url, { from: "start" });

    const consumer = recordingD1();
    const messages = [wake(a.owner.orgId), wake(a.owner.orgId), wake(b.owner.orgId), wake(a.owner.orgId)];
    const run = await runBatch(messages, { env: consumer.env });

    expect(run.result.explicitAcks.sort()).toEqual([...run.ids].sort());
    expect(run.result.retryMessages).toEqual([]);
    // One read of the streams per organization, not one per message (four messages, two organizations).
    expect(readsOfStreams(consumer.trips)).toHaveLength(2);
    for (const [caller, stream, bucket] of [
      [a.owner, streamA, inA.bucket],
      [b.owner, streamB, inB.bucket],
    ] as const) {
      const read = await eventually(
        () => readStream(caller, stream.id),
        (s) => s.pending === 0,
      );
      expect((await sequencesReceived(bucket)).at(-1)).toBe(read.delivered_through);
    }
  });

  it("the EVENTS queue hands the consumer batches of up to 100: 100 wake-ups of one organization sent at once wake its stream once or twice, not ten times", async () => {
    const { owner } = await createOrgWithOwner();
    const { url } = receiverBucket();
    const stream = await createStream(owner, url);
    await caughtUp(owner, stream.id);
    // Every wake of this stream counted (an RPC method is looked up on the class).
    let wakes = 0;
    const wakeUp = AuditStream.prototype.wake;
    AuditStream.prototype.wake = function (this: AuditStream, target) {
      if (target.streamId === stream.id) wakes++;
      return wakeUp.call(this, target);
    };
    onTestFinished(() => {
      AuditStream.prototype.wake = wakeUp;
    });
    // What one organization's burst puts on the shared queue at once (a batch of 10 woke it 10 times).
    await env.EVENTS.sendBatch(
      Array.from({ length: 100 }, () => ({ ...wake(owner.orgId), contentType: "json" as const })),
    );
    await eventually(
      async () => wakes,
      (n) => n > 0,
    );
    // Long enough for any later batch (the local queue waits 1 s for a batch that is not full).
    await sleep(1500);
    // Another test file's messages may share the queue meanwhile and split the 100 in two.
    expect(wakes).toBeGreaterThanOrEqual(1);
    expect(wakes).toBeLessThanOrEqual(2);
  });

  it("a wake-up that names a database the organization is not in (one sent before a move switched) sends nothing from there: the run sends from where the directory says it is", async () => {
    const { owner } = await createOrgWithOwner();
    const [home, elsewhere] = [receiverBucket(), receiverBucket()];
    const stream = await createStream(owner, home.url, { from: "start" });
    await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    // What a database the organization left still holds (a move's source before its clean-up):
    // the stream, behind, sending elsewhere, and an entry the organization's log does not have.
    const row = await env.DB.prepare("SELECT * FROM audit_streams WHERE id = ?").bind(stream.id).first();
    const entry = await env.DB.prepare("SELECT * FROM audit_log WHERE org_id = ? AND sequence = 1")
      .bind(owner.orgId)
      .first();
    const copy = async (table: string, values: Record<string, unknown>) => {
      const columns = Object.keys(values);
      await env.DB_ORG_2.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      )
        .bind(...Object.values(values))
        .run();
    };
    const org = await env.DB.prepare("SELECT * FROM organizations WHERE id = ?").bind(owner.orgId).first();
    await copy("organizations", { ...org });
    await copy("audit_streams", { ...row, url: elsewhere.url, delivered_through: 0 });
    await copy("audit_log", {
      ...entry,
      id: `al_stale${crypto.randomUUID().slice(0, 8)}`,
      action: "stale.copy",
    });
    const object = env.AUDIT_STREAMS.get(env.AUDIT_STREAMS.idFromName(stream.id));
    const stored = () =>
      runInDurableObject(object, (_instance: AuditStream, state) =>
        state.storage.get<{ database: string }>("target"),
      );
    try {
      await object.wake({ streamId: stream.id, database: "DB_ORG_2", orgId: owner.orgId });
      // Its run asked the directory and keeps the organization's database from then on.
      expect((await eventually(stored, (target) => target?.database === "DB"))?.database).toBe("DB");
      const after = await request("POST", "/v1/projects", { key: owner.key, body: { name: "after-wake" } });
      expect(after.status, after.raw).toBe(201);
      const done = await eventually(
        () => readStream(owner, stream.id),
        (s) => s.pending === 0,
      );
      expect((await sequencesReceived(home.bucket)).at(-1)).toBe(done.delivered_through);
      expect(await sequencesReceived(elsewhere.bucket)).toEqual([]);
    } finally {
      await env.DB_ORG_2.prepare("DELETE FROM audit_log WHERE org_id = ?").bind(owner.orgId).run();
      await env.DB_ORG_2.prepare("DELETE FROM audit_streams WHERE id = ?").bind(stream.id).run();
      await env.DB_ORG_2.prepare("DELETE FROM org_limits WHERE org_id = ?").bind(owner.orgId).run();
      await env.DB_ORG_2.prepare("DELETE FROM organizations WHERE id = ?").bind(owner.orgId).run();
    }
  });

  it("a stream's object stores the stream and its database once: a wake that names them again writes nothing, a new database is stored", async () => {
    const object = env.AUDIT_STREAMS.get(env.AUDIT_STREAMS.idFromName(`wake-${crypto.randomUUID()}`));
    const puts: unknown[] = [];
    await runInDurableObject(object, (_instance: AuditStream, state) => {
      const put = state.storage.put.bind(state.storage);
      state.storage.put = ((key: string, value: unknown) => {
        puts.push(value);
        return put(key, value);
      }) as typeof state.storage.put;
    });
    // An unknown stream: each alarm finds nothing to send and sets none.
    await object.wake({ streamId: "as_unknown", database: "DB" });
    await object.wake({ streamId: "as_unknown", database: "DB" });
    await object.wake({ streamId: "as_unknown", database: "DB_ORG_2" });
    expect(puts).toEqual([
      { streamId: "as_unknown", database: "DB" },
      { streamId: "as_unknown", database: "DB_ORG_2" },
    ]);
    await runInDurableObject(object, async (_instance: AuditStream, state) => {
      expect(await state.storage.get("target")).toEqual({ streamId: "as_unknown", database: "DB_ORG_2" });
    });
  });
});
