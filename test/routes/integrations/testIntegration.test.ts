/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * POST …/{integration_id}/test (operationId testIntegration): one signed delivery now, nothing stored.
 */
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { events, webhookDeliveries } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller, unique } from "../../helpers/factories";
import { one, setupIntegration } from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver, db, hook, integrate, received } from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

describe("POST …/{integration_id}/test", () => {
  it("sends one signed delivery now and answers what the receiver did; nothing is stored", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
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
    const { owner, bucket, path } = await setupIntegration();
    const res = await request("POST", `${path}/test`, { key: owner.key });
    expect(res.status).toBe(200);
    const [req] = await received(bucket);
    expect(JSON.parse(req?.body ?? "{}").type).toBe("deployment.succeeded");
  });

  it("takes an empty body as no body, with or without a JSON content-type", async () => {
    const { owner, bucket, path } = await setupIntegration();
    const empty = new Uint8Array(0);
    const forms: Record<string, string>[] = [
      {},
      { "content-type": "application/json" },
      { "content-length": "0" },
      { "content-type": "application/json ; charset=utf-8" },
    ];
    for (const headers of forms) {
      const res = await request("POST", `${path}/test`, { key: owner.key, rawBody: empty, headers });
      expect(res.status, `${JSON.stringify(headers)} → ${res.raw}`).toBe(200);
    }
    const sent = await received(bucket);
    expect(sent.map((req) => JSON.parse(req.body).type)).toEqual(Array(4).fill("deployment.succeeded"));
  });

  it("reports a failing receiver without retrying, and does not follow a redirect", async () => {
    const { owner, project } = await setupIntegration();
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
  });

  it("sends Slack's { text } to a slack integration", async () => {
    const { owner, project } = await setupIntegration();
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
    const { org, owner, project, path } = await setupIntegration();
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
    const { owner, path } = await setupIntegration();
    return { method: "POST", path: `${path}/test`, body: {}, caller: owner };
  });
});
