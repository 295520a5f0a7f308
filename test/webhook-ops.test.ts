/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * Test send, redeliver, recover, secret rotation (verified with the standardwebhooks package),
 * enabled/disabled (manual, 410, 5 days of failures), skipped deliveries and Slack URL redaction.
 */
import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  env,
  getQueueResult,
} from "cloudflare:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events, notificationIntegrations, webhookDeliveries } from "../src/db/schema";
import worker from "../src/index";
import { internalOk, request } from "./helpers/api";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createProject,
  unique,
} from "./helpers/factories";
import { captureLogs } from "./helpers/logs";
import { expectMatchesOpenApi } from "./helpers/openapi";
import { runCommonRouteTests } from "./helpers/security";
import {
  DAY_MS,
  db,
  deliveriesOfEvent,
  deliveryRow,
  eventually,
  hook,
  integrate,
  integrationRow,
  received,
  writeDelivery,
  writeEvent,
} from "./helpers/webhooks";

beforeAll(() => {
  // The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
  env.ALLOW_INSECURE_WEBHOOKS = "true";
});
afterAll(() => {
  env.ALLOW_INSECURE_WEBHOOKS = "false";
});

type ErrorBody = { code: string; message: string; cause?: Array<{ path: string; message: string }> };
type Integration = {
  id: string;
  url: string;
  type: string;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
};
type Delivery = { id: string; event_id: string; status: string; attempts: number; integration_id: string };

const ONE = "/v1/projects/{project_id}/notification-integrations/{integration_id}";
const one = (projectId: string, integrationId: string) =>
  `/v1/projects/${projectId}/notification-integrations/${integrationId}`;

async function setup(configuration: Record<string, boolean> = { changelog: true }, query = "") {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const bucket = unique("ops");
  const integration = await integrate(project.id, hook(bucket, query), configuration);
  return { org, owner, project, bucket, integration, path: one(project.id, integration.id) };
}

/** An event through the internal API: written, then fanned out and delivered by the real queue. */
const emit = (projectId: string, type = "changelog.created", data: Record<string, unknown> = {}) =>
  internalOk<{ id: string }>("POST", `/projects/${projectId}/events`, { type, data });

/** One delivery message through the Worker's queue handler (the EVENTS queue or its dead letters). */
async function runMessage(deliveryId: string, opts: { series?: number; queue?: string } = {}) {
  const body = {
    kind: "webhook.deliver",
    delivery_id: deliveryId,
    ...(opts.series === undefined ? {} : { series: opts.series }),
  };
  const batch = createMessageBatch(opts.queue ?? "deploy-platform-events", [
    { id: unique("msg"), timestamp: new Date(), attempts: 1, body },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, ctx);
}
const runDeadLetter = (deliveryId: string, series?: number) =>
  runMessage(deliveryId, {
    queue: "deploy-platform-events-dlq",
    ...(series === undefined ? {} : { series }),
  });

describe("POST …/{integration_id}/test", () => {
  it("sends one signed delivery now and answers what the receiver did; nothing is stored", async () => {
    const { owner, project, integration, bucket, path } = await setup();
    const eventsBefore = await db.select().from(events).where(eq(events.projectId, project.id)).all();
    const res = await request<Record<string, unknown>>("POST", `${path}/test`, {
      key: owner.key,
      body: { type: "service.in_alarm" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      delivered: true,
      status_code: 200,
      error: null,
      duration_ms: expect.any(Number),
    });
    await expectMatchesOpenApi("POST", `${ONE}/test`, 200, res.body);

    const [req, ...rest] = await received(bucket);
    expect(rest).toEqual([]);
    const payload = new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {});
    expect(payload).toMatchObject({ type: "service.in_alarm", data: { test: true, project_id: project.id } });
    // Not in the event log, not a delivery.
    expect(await db.select().from(events).where(eq(events.projectId, project.id)).all()).toEqual(
      eventsBefore,
    );
    expect(
      await db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.integrationId, integration.id))
        .all(),
    ).toEqual([]);
  });

  it("defaults to deployment.succeeded and takes no body at all", async () => {
    const { owner, bucket, path } = await setup();
    const res = await request("POST", `${path}/test`, { key: owner.key });
    expect(res.status).toBe(200);
    const [req] = await received(bucket);
    expect(JSON.parse(req?.body ?? "{}").type).toBe("deployment.succeeded");
  });

  it("reports a failing receiver without retrying, and does not follow a redirect", async () => {
    const { org, owner, project } = await setup();
    for (const [status, error] of [
      [500, "HTTP 500"],
      [302, "HTTP 302"],
    ] as const) {
      const bucket = unique(`t${status}`);
      const integration = await integrate(project.id, hook(bucket, `?status=${status}`), {});
      const res = await request("POST", `${one(project.id, integration.id)}/test`, {
        key: owner.key,
        body: {},
      });
      expect(res.body).toMatchObject({ delivered: false, status_code: status, error });
      expect(await received(bucket)).toHaveLength(1);
      expect(await received(`${bucket}-redirected`)).toEqual([]);
    }
    expect(org.id).toBeTruthy();
  });

  it("sends Slack's { text } to a slack integration", async () => {
    const { owner, project } = await setup();
    const bucket = unique("slack");
    const slack = await integrate(project.id, hook(bucket), {}, "slack");
    const res = await request("POST", `${one(project.id, slack.id)}/test`, {
      key: owner.key,
      body: { type: "service.ok" },
    });
    expect(res.body).toMatchObject({ delivered: true });
    const [req] = await received(bucket);
    expect(JSON.parse(req?.body ?? "{}")).toEqual({
      text: `:large_green_circle: A service is OK (project \`${project.id}\`)`,
    });
  });

  it("refuses an unknown type or field, and a viewer", async () => {
    const { org, owner, project, path } = await setup();
    for (const body of [{ type: "deployment.exploded" }, { type: "service.ok", extra: 1 }]) {
      const res = await request<ErrorBody>("POST", `${path}/test`, { key: owner.key, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("bad_input");
    }
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const res = await request<ErrorBody>("POST", `${path}/test`, { key: viewer.key });
    expect(res.status).toBe(403);
  });

  runCommonRouteTests("POST integration test", async () => {
    const { owner, path } = await setup();
    return { method: "POST", path: `${path}/test`, body: {}, caller: owner };
  });
});

describe("POST …/deliveries/{delivery_id}/redeliver", () => {
  // A superseded series' failed attempt is logged by design; these tests cause it on purpose.
  captureLogs("warn");
  it("queues a new series for the same event, whatever its status, with the same webhook-id", async () => {
    const { owner, project, integration, bucket, path } = await setup();
    for (const status of ["failed", "succeeded", "skipped"] as const) {
      const event = await writeEvent(project.id, "changelog.created", { n: status });
      const deliveryId = await writeDelivery(project.id, event.id, integration.id, { status, attempts: 1 });
      const res = await request<Delivery>("POST", `${path}/deliveries/${deliveryId}/redeliver`, {
        key: owner.key,
      });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ id: deliveryId, event_id: event.id, status: "pending", attempts: 1 });
      await expectMatchesOpenApi("POST", `${ONE}/deliveries/{delivery_id}/redeliver`, 202, res.body);
      await eventually(async () => {
        const got = (await received(bucket)).filter((r) => r.headers["webhook-id"] === event.id);
        expect(got).toHaveLength(1);
        expect(await deliveryRow(deliveryId)).toMatchObject({ status: "succeeded", attempts: 2 });
      });
    }
  });

  it("supersedes the series still running: its retries and its dead letter change nothing", async () => {
    const { owner, project, bucket } = await setup();
    const failing = await integrate(project.id, hook(bucket, "?status=500"), {});
    const event = await writeEvent(project.id, "changelog.created");
    // Series 0 (the fan-out's) is still retrying.
    const deliveryId = await writeDelivery(project.id, event.id, failing.id, {
      status: "pending",
      attempts: 2,
    });
    const res = await request<Delivery>(
      "POST",
      `${one(project.id, failing.id)}/deliveries/${deliveryId}/redeliver`,
      { key: owner.key },
    );
    expect(res.status).toBe(202);
    await eventually(async () => expect((await deliveryRow(deliveryId))?.attempts).toBe(3));
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: "pending", series: 1 });
    // Series 0's last try dead-letters: the delivery is not failed, the new series goes on.
    await runDeadLetter(deliveryId);
    expect((await deliveryRow(deliveryId))?.status).toBe("pending");
    // A retry of series 0 arrives: acknowledged, nothing sent.
    const stale = await runMessage(deliveryId, { series: 0 });
    expect(stale.explicitAcks).toHaveLength(1);
    expect(await received(bucket)).toHaveLength(1);
    expect((await deliveryRow(deliveryId))?.attempts).toBe(3);
    // Series 1's own dead letter ends it.
    await runDeadLetter(deliveryId, 1);
    expect((await deliveryRow(deliveryId))?.status).toBe("failed");
  });

  it("is 404 for a delivery of another integration, and 400 for a malformed id", async () => {
    const { owner, project, integration, path } = await setup();
    const other = await integrate(project.id, hook(unique("other")), {});
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, other.id, { status: "failed" });
    const res = await request<ErrorBody>("POST", `${path}/deliveries/${deliveryId}/redeliver`, {
      key: owner.key,
    });
    expect(res.status).toBe(404);
    expect((await deliveryRow(deliveryId))?.status).toBe("failed");
    const bad = await request<ErrorBody>("POST", `${path}/deliveries/not-an-id!/redeliver`, {
      key: owner.key,
    });
    expect(bad.status).toBe(400);
    expect(integration.id).toBeTruthy();
  });

  runCommonRouteTests("POST redeliver", async () => {
    const { owner, project, integration, path } = await setup();
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id, { status: "failed" });
    return { method: "POST", path: `${path}/deliveries/${deliveryId}/redeliver`, caller: owner };
  });
});

describe("enabled / disabled, skipped, recover", () => {
  // Disabling an integration is logged as a warning by design; these tests cause it on purpose.
  captureLogs("warn");
  it("a disabled integration records events as skipped; recover sends them later with their original webhook-id", async () => {
    const { owner, project, integration, bucket, path } = await setup();
    const off = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: false } });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ enabled: false, disabled_reason: "manual" });
    expect(off.body.disabled_at).toMatch(/Z$/);
    await expectMatchesOpenApi("PATCH", ONE, 200, off.body);

    const { id: eventId } = await emit(project.id);
    await eventually(async () => {
      expect((await deliveriesOfEvent(eventId)).map((d) => d.status)).toEqual(["skipped"]);
    });
    const on = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    // Neither disabling nor re-enabling sent anything.
    expect(await received(bucket)).toEqual([]);

    const res = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      body: { since: new Date(Date.now() - 3600_000).toISOString() },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ queued: 1 });
    await expectMatchesOpenApi("POST", `${ONE}/recover`, 202, res.body);
    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(eventId);
      new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {});
    });
    await eventually(async () => {
      expect((await deliveriesOfEvent(eventId)).map((d) => d.status)).toEqual(["succeeded"]);
    });
    // Nothing left to recover.
    const again = await request("POST", `${path}/recover`, {
      key: owner.key,
      body: { since: new Date(Date.now() - 3600_000).toISOString() },
    });
    expect(again.body).toEqual({ queued: 0 });
  });

  it("recover takes only failed and skipped deliveries whose event is in [since, until]", async () => {
    const { owner, project, integration, bucket, path } = await setup();
    const at = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString();
    const make = async (daysAgo: number, status: "failed" | "skipped" | "succeeded" | "pending") => {
      const event = await writeEvent(project.id, "changelog.created", {}, daysAgo * DAY_MS);
      await writeDelivery(project.id, event.id, integration.id, { status, at: event.createdAt });
      return event.id;
    };
    const inRange = [await make(3, "failed"), await make(2, "skipped")];
    await make(2.5, "succeeded");
    await make(2.5, "pending");
    await make(5, "failed"); // before since
    await make(0.5, "skipped"); // after until
    const res = await request<{ queued: number }>("POST", `${path}/recover`, {
      key: owner.key,
      // Any RFC 3339 offset is read as the instant it names.
      body: { since: at(4).replace("Z", "+00:00"), until: at(1) },
    });
    expect(res.body).toEqual({ queued: 2 });
    await eventually(async () => {
      expect((await received(bucket)).map((r) => r.headers["webhook-id"]).sort()).toEqual(
        [...inRange].sort(),
      );
    });
  });

  it("recover refuses a bad range or body and changes nothing", async () => {
    const { owner, path } = await setup();
    for (const body of [
      {},
      { since: "yesterday" },
      { since: "2026-11-20T00:00:00Z", until: "2026-11-19T00:00:00Z" },
      { since: "2026-11-20T00:00:00Z", extra: true },
    ]) {
      const res = await request<ErrorBody>("POST", `${path}/recover`, { key: owner.key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe("bad_input");
    }
  });

  it("a receiver answering 410 Gone disables the integration at once; later events are skipped", async () => {
    const { project, integration, bucket } = await setup({ changelog: true }, "?status=410");
    const first = await emit(project.id);
    await eventually(async () => {
      expect(await integrationRow(integration.id)).toMatchObject({ enabled: false, disabledReason: "gone" });
      expect(await deliveriesOfEvent(first.id)).toEqual([
        expect.objectContaining({ status: "failed", attempts: 1 }),
      ]);
    });
    const second = await emit(project.id);
    await eventually(async () => {
      expect((await deliveriesOfEvent(second.id)).map((d) => d.status)).toEqual(["skipped"]);
    });
    expect(await received(bucket)).toHaveLength(1);
  });

  it("5 days of nothing but failures (3 failed deliveries) disables it as failing; less does not", async () => {
    const cases = [
      { since: 6, failedBefore: 2, disabled: true },
      { since: 4, failedBefore: 2, disabled: false }, // the run is not 5 days old
      { since: 6, failedBefore: 1, disabled: false }, // only 2 failed deliveries in the run
    ];
    for (const c of cases) {
      const { project, integration } = await setup();
      const start = new Date(Date.now() - c.since * DAY_MS).toISOString();
      await db
        .update(notificationIntegrations)
        .set({ failingSince: start })
        .where(eq(notificationIntegrations.id, integration.id))
        .run();
      for (let i = 0; i < c.failedBefore; i++) {
        const event = await writeEvent(project.id, "changelog.created", {}, (c.since - 1) * DAY_MS);
        await writeDelivery(project.id, event.id, integration.id, {
          status: "failed",
          at: new Date(Date.now() - (c.since - 1 - i * 0.1) * DAY_MS).toISOString(),
        });
      }
      const event = await writeEvent(project.id, "changelog.created");
      const last = await writeDelivery(project.id, event.id, integration.id, {
        status: "pending",
        attempts: 7,
      });
      await runDeadLetter(last);
      expect((await deliveryRow(last))?.status).toBe("failed");
      const row = await integrationRow(integration.id);
      expect({ enabled: row?.enabled, reason: row?.disabledReason }, JSON.stringify(c)).toEqual(
        c.disabled ? { enabled: false, reason: "failing" } : { enabled: true, reason: null },
      );
    }
  });

  it("a success ends the run of failures, and re-enabling clears it", async () => {
    const { owner, project, integration, path } = await setup();
    const start = new Date(Date.now() - 6 * DAY_MS).toISOString();
    await db
      .update(notificationIntegrations)
      .set({ failingSince: start })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    await emit(project.id);
    await eventually(async () => {
      expect((await integrationRow(integration.id))?.failingSince).toBeNull();
    });
    await db
      .update(notificationIntegrations)
      .set({ failingSince: start, enabled: false, disabledReason: "failing", disabledAt: start })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    const on = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: true } });
    expect(on.body).toMatchObject({ enabled: true, disabled_reason: null, disabled_at: null });
    expect((await integrationRow(integration.id))?.failingSince).toBeNull();
  });

  it("PATCH refuses a non-boolean enabled and changes nothing", async () => {
    const { owner, integration, path } = await setup();
    for (const enabled of ["false", 0, null]) {
      const res = await request<ErrorBody>("PATCH", path, { key: owner.key, body: { enabled } });
      expect(res.status, String(enabled)).toBe(400);
      expect(res.body.cause?.[0]?.path).toBe("enabled");
    }
    expect((await integrationRow(integration.id))?.enabled).toBe(true);
  });

  it("disabling twice keeps the first reason and time", async () => {
    const { owner, integration, path } = await setup();
    const gone = "2026-11-01T00:00:00.000Z";
    await db
      .update(notificationIntegrations)
      .set({ enabled: false, disabledReason: "gone", disabledAt: gone })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    const res = await request<Integration>("PATCH", path, { key: owner.key, body: { enabled: false } });
    expect(res.body).toMatchObject({ enabled: false, disabled_reason: "gone", disabled_at: gone });
  });

  runCommonRouteTests("POST recover", async () => {
    const { owner, path } = await setup();
    return {
      method: "POST",
      path: `${path}/recover`,
      body: { since: "2026-11-01T00:00:00Z" },
      caller: owner,
    };
  });
});

describe("POST …/rotate-secret", () => {
  it("signs with both secrets while the previous lives, then with the new one only; the cron forgets it", async () => {
    const { owner, project, integration, bucket, path } = await setup();
    const res = await request<{ signing_secret: string; previous_expires_at: string }>(
      "POST",
      `${path}/rotate-secret`,
      { key: owner.key, body: { expire_previous_in: 3600 } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Math.abs(Date.parse(res.body.previous_expires_at) - Date.now() - 3600_000)).toBeLessThan(10_000);
    await expectMatchesOpenApi("POST", `${ONE}/rotate-secret`, 200, res.body);
    const fresh = new Webhook(res.body.signing_secret);
    const old = new Webhook(integration.signing_secret);

    const first = await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    const [during] = await received(bucket);
    expect(during?.headers["webhook-id"]).toBe(first.id);
    expect(during?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(fresh.verify(during?.body ?? "", during?.headers ?? {})).toBeTruthy();
    expect(old.verify(during?.body ?? "", during?.headers ?? {})).toBeTruthy();

    // The overlap ends.
    const past = new Date(Date.now() - 1000).toISOString();
    await db
      .update(notificationIntegrations)
      .set({ previousSecretExpiresAt: past })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(2));
    const after = (await received(bucket))[1];
    expect(after?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(fresh.verify(after?.body ?? "", after?.headers ?? {})).toBeTruthy();
    expect(() => old.verify(after?.body ?? "", after?.headers ?? {})).toThrow();

    expect((await integrationRow(integration.id))?.previousSigningSecret).toBe(integration.signing_secret);
    await worker.scheduled(createScheduledController({ cron: "*/5 * * * *" }), env);
    expect(await integrationRow(integration.id)).toMatchObject({
      previousSigningSecret: null,
      previousSecretExpiresAt: null,
    });
  });

  it("defaults to 86400 s, and expire_previous_in 0 stops the previous secret at once", async () => {
    const { owner, bucket, path, integration } = await setup();
    const def = await request<{ previous_expires_at: string }>("POST", `${path}/rotate-secret`, {
      key: owner.key,
    });
    expect(Math.abs(Date.parse(def.body.previous_expires_at) - Date.now() - 86_400_000)).toBeLessThan(10_000);
    const now = await request<{ signing_secret: string }>("POST", `${path}/rotate-secret`, {
      key: owner.key,
      body: { expire_previous_in: 0 },
    });
    await request("POST", `${path}/test`, { key: owner.key });
    const [req] = await received(bucket);
    expect(req?.headers["webhook-signature"]).not.toContain(" ");
    expect(new Webhook(now.body.signing_secret).verify(req?.body ?? "", req?.headers ?? {})).toBeTruthy();
    expect(() =>
      new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
    ).toThrow();
  });

  it("refuses expire_previous_in outside 0–604800 or not an integer", async () => {
    const { owner, path, integration } = await setup();
    for (const value of [-1, 604_801, 1.5, "60"]) {
      const res = await request<ErrorBody>("POST", `${path}/rotate-secret`, {
        key: owner.key,
        body: { expire_previous_in: value },
      });
      expect(res.status, String(value)).toBe(400);
    }
    expect((await integrationRow(integration.id))?.signingSecret).toBe(integration.signing_secret);
  });

  runCommonRouteTests("POST rotate-secret", async () => {
    const { owner, path } = await setup();
    return { method: "POST", path: `${path}/rotate-secret`, body: {}, caller: owner };
  });
});

describe("Slack URLs are credentials", () => {
  it("every public answer redacts a slack URL; the internal create shows it; a public PATCH of it is 400", async () => {
    const { owner, project } = await setup();
    const full = "https://hooks.slack.com/services/T000/B000/abcdefghx7Qz";
    const created = await integrate(project.id, full, { changelog: true }, "slack");
    expect(created.url).toBe(full);
    const redacted = "https://hooks.slack.com/…x7Qz";
    const path = one(project.id, created.id);
    const got = await request<Integration>("GET", path, { key: owner.key });
    expect(got.body.url).toBe(redacted);
    const list = await request<{ data: Integration[] }>(
      "GET",
      `/v1/projects/${project.id}/notification-integrations`,
      { key: owner.key },
    );
    expect(list.body.data.find((i) => i.id === created.id)?.url).toBe(redacted);
    expect(list.raw).not.toContain("abcdefgh");
    const patched = await request<Integration>("PATCH", path, {
      key: owner.key,
      body: { configuration: { services_ok: true } },
    });
    expect(patched.body.url).toBe(redacted);
    const refused = await request<ErrorBody>("PATCH", path, {
      key: owner.key,
      body: { url: "https://hooks.slack.com/services/T000/B000/other" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.cause).toEqual([expect.objectContaining({ path: "url" })]);
    expect((await integrationRow(created.id))?.url).toBe(full);
  });
});
