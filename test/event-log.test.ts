/**
 * The event log (API_CONTRACT §13): a project's events with the shared pagination and a type
 * filter, one event, an event's deliveries, and the daily 30-day retention in bounded batches.
 */
import { createScheduledController, env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../src/context";
import { deliveryAttempts, events, webhookDeliveries } from "../src/db/schema";
import worker from "../src/index";
import { newId } from "../src/lib/ids";
import { purgeOldEvents } from "../src/services/events/log";

/** The daily cron of wrangler.toml (src/index.ts dispatches retention on it). */
const RETENTION_CRON = "0 3 * * *";

import { request } from "./helpers/api";
import type { ErrorBody } from "./helpers/expect";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  unique,
} from "./helpers/factories";
import { captureLogs } from "./helpers/logs";
import { runCommonRouteTests } from "./helpers/security";
import { DAY_MS, db, integrate, writeDelivery, writeEvent } from "./helpers/webhooks";

type EventRecord = {
  id: string;
  type: string;
  project_id: string;
  data: Record<string, unknown>;
  created_at: string;
};
type Page<T> = { data: T[]; has_more: boolean; next_page?: string };

const list = (projectId: string, query = "") => `/v1/projects/${projectId}/events${query}`;

describe("GET /v1/projects/{project_id}/events", () => {
  it("lists the project's events newest first, the record carrying the webhook body's data", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await writeEvent(project.id, "changelog.created", { title: "v1" }, 3000);
    const b = await writeEvent(project.id, "service.ok", { service: "api" }, 2000);
    const c = await writeEvent(project.id, "deployment.failed", { deployment: { id: "d" } }, 1000);
    const other = await createOwnedProject();
    await writeEvent(other.project.id, "service.ok");

    const res = await request<Page<EventRecord>>("GET", list(project.id), { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((e) => e.id)).toEqual([c.id, b.id, a.id]);
    expect(res.body.data[2]).toEqual({
      id: a.id,
      type: "changelog.created",
      project_id: project.id,
      data: { title: "v1", project_id: project.id },
      created_at: a.createdAt,
    });
    expect(res.body.has_more).toBe(false);
    expect("next_page" in res.body).toBe(false);

    const asc = await request<Page<EventRecord>>("GET", list(project.id, "?sort_by=created_at"), {
      key: owner.key,
    });
    expect(asc.body.data.map((e) => e.id)).toEqual([a.id, b.id, c.id]);
  });

  it("filters by type, repeated or comma-separated, and binds a cursor to the set of types", async () => {
    const { owner, project } = await createOwnedProject();
    const kept = [];
    for (let i = 0; i < 5; i++) {
      kept.push(
        await writeEvent(project.id, i % 2 ? "service.ok" : "service.in_alarm", {}, 10_000 - i * 100),
      );
      await writeEvent(project.id, "changelog.created", {}, 10_000 - i * 100 - 50);
    }
    const expected = kept.map((e) => e.id).reverse();
    const first = await request<Page<EventRecord>>(
      "GET",
      list(project.id, "?type=service.ok,service.in_alarm&limit=3"),
      { key: owner.key },
    );
    expect(first.body.data.map((e) => e.id)).toEqual(expected.slice(0, 3));
    expect(first.body.has_more).toBe(true);
    const cursor = encodeURIComponent(first.body.next_page ?? "");
    // The same set, spelled another way: the cursor still fits.
    const second = await request<Page<EventRecord>>(
      "GET",
      list(project.id, `?type=service.in_alarm&type=service.ok&type=service.ok&limit=3&after=${cursor}`),
      { key: owner.key },
    );
    expect(second.status).toBe(200);
    expect(second.body.data.map((e) => e.id)).toEqual(expected.slice(3));
    expect(second.body.has_more).toBe(false);
    // Another set, no filter, or another order: 400.
    for (const query of [
      `?type=service.ok&after=${cursor}`,
      `?after=${cursor}`,
      `?type=service.ok,service.in_alarm&sort_by=created_at&after=${cursor}`,
    ]) {
      const res = await request<ErrorBody>("GET", list(project.id, query), { key: owner.key });
      expect(res.status, query).toBe(400);
      expect(res.body.cause?.[0]?.path).toBe("after");
    }
  });

  it("refuses an unknown type and an unknown project", async () => {
    const { owner, project } = await createOwnedProject();
    const bad = await request<ErrorBody>("GET", list(project.id, "?type=service.ok,deployment.exploded"), {
      key: owner.key,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("bad_input");
    const missing = await request<ErrorBody>("GET", list(newId()), { key: owner.key });
    expect(missing.status).toBe(404);
  });

  it("a viewer reads; an org member outside the project gets 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    await writeEvent(project.id, "service.ok");
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    expect((await request("GET", list(project.id), { key: viewer.key })).status).toBe(200);
    const outsider = await createCaller(org, "member", owner);
    expect((await request("GET", list(project.id), { key: outsider.key })).status).toBe(404);
  });

  runCommonRouteTests("GET project events", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: list(project.id), caller: owner };
  });
});

describe("GET /v1/events/{event_id} and its deliveries", () => {
  it("reads one event and the deliveries it made, with their attempts", async () => {
    const { owner, project } = await createOwnedProject();
    const one = await integrate(project.id, `https://hooks.example.com/${unique("e1")}`, {
      services_ok: true,
    });
    const two = await integrate(project.id, `https://hooks.example.com/${unique("e2")}`, {
      services_ok: true,
    });
    const event = await writeEvent(project.id, "service.ok", { service: "api" });
    const d1 = await writeDelivery(project.id, event.id, one.id, { status: "failed", attempts: 1 });
    const d2 = await writeDelivery(project.id, event.id, two.id, { status: "skipped" });
    await db
      .insert(deliveryAttempts)
      .values({
        id: newId(),
        deliveryId: d1,
        attempt: 1,
        statusCode: 500,
        error: "HTTP 500",
        durationMs: 12,
        createdAt: new Date().toISOString(),
      })
      .run();

    const got = await request<EventRecord>("GET", `/v1/events/${event.id}`, { key: owner.key });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: event.id,
      type: "service.ok",
      project_id: project.id,
      data: { service: "api", project_id: project.id },
      created_at: event.createdAt,
    });

    const deliveries = await request<Page<{ id: string; status: string; attempt_log: unknown[] }>>(
      "GET",
      `/v1/events/${event.id}/deliveries?sort_by=created_at`,
      { key: owner.key },
    );
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.map((d) => [d.id, d.status, d.attempt_log.length]).sort()).toEqual(
      [
        [d1, "failed", 1],
        [d2, "skipped", 0],
      ].sort(),
    );
  });

  it("an event of another organization or an unknown id is 404; a malformed id 400", async () => {
    const { project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    const { owner: stranger } = await createOrgWithOwner();
    for (const path of [
      `/v1/events/${event.id}`,
      `/v1/events/${event.id}/deliveries`,
      `/v1/events/${newId()}`,
    ]) {
      const res = await request<ErrorBody>("GET", path, { key: stranger.key });
      expect(res.status, path).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await request("GET", "/v1/events/bad!id", { key: stranger.key })).status).toBe(400);
  });

  runCommonRouteTests("GET event", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    return { method: "GET", path: `/v1/events/${event.id}`, caller: owner };
  });

  runCommonRouteTests("GET event deliveries", async () => {
    const { owner, project } = await createOwnedProject();
    const event = await writeEvent(project.id, "service.ok");
    return { method: "GET", path: `/v1/events/${event.id}/deliveries`, caller: owner };
  });
});

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
    await worker.scheduled(createScheduledController({ cron: RETENTION_CRON }), env);
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
    await worker.scheduled(createScheduledController({ cron: "*/5 * * * *" }), env);
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
