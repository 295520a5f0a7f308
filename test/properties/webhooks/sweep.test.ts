/** Never losing an event: the stale-event sweep and the dead-letter consumer. */
import { createScheduledController, env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { events } from "../../../src/db/schema";
import worker from "../../../src/index";
import { request } from "../../helpers/api";
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
// A dead-lettered fan-out is logged as an error by design; one test causes it on purpose.
const errors = captureLogs("error");

describe("never losing an event", () => {
  it("sweeps events whose fan-out never happened once they are a minute old, and leaves fresh ones", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("swept");
    const integration = await integrate(project.id, hook(bucket), { changelog: true });
    const stale = await writeEvent(project.id, "changelog.created", { title: "lost" }, 2 * 60_000);
    const fresh = await writeEvent(project.id, "changelog.created", { title: "new" });

    // The cron runs the sweep.
    await worker.scheduled(createScheduledController({ cron: "*/5 * * * *" }), env);
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
