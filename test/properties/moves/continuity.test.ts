/**
 * API_CONTRACT §32 "Once completed": webhooks and audit streams go on without a gap. A project's
 * integration gets the events of before and after the move, each once; the organization's audit
 * stream delivers every sequence from 1 to its last, the move's two entries in their places, and
 * stays caught up; both objects now read the organization where it is.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  createStream,
  readStream,
  receiverBucket,
  sequencesReceived,
  eventually as until,
} from "../../helpers/audit-streams";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { deploy, reportOk } from "../../helpers/engine";
import { createOwnedProject, createProject, createStack, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { auditActions, moveOrg } from "../../helpers/moves";
import { sleep } from "../../helpers/wait";
import {
  allowTheLocalReceiver,
  eventually,
  hook,
  integrate,
  laneEntries,
  laneOf,
  received,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("webhooks and audit streams across a move", () => {
  // A stream's run that meets the move's fence retries without an error line: the organization is
  // switching databases, not failing.
  const errors = captureLogs("error");

  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const) {
    it(`${from} → ${to}: every event delivered once, every audit sequence streamed, none skipped`, async () => {
      const { owner } = await createOrgWithOwnerIn(from);
      const project = await createProject(owner);
      const stack = await createStack(project.default_environment_id);
      const bucket = unique("hooks");
      const integration = await integrate(project.id, hook(bucket), { deployments_succeeded: true });
      const streamed = receiverBucket();
      const stream = await createStream(owner, streamed.url, { from: "start" });

      const succeed = async () => {
        const d = await deploy(project.default_environment_id, [stack.id]);
        await reportOk(d.id, { status: "in_progress" });
        await reportOk(d.id, { status: "succeeded" });
        return d.id;
      };
      const before = await succeed();
      await eventually(async () => expect((await received(bucket)).length).toBe(1));
      await moveOrg(owner.orgId, to);
      const after = await succeed();

      const deliveredIds = async () =>
        (await received(bucket)).map(
          (r) =>
            (
              new Webhook(integration.signing_secret).verify(r.body, r.headers) as {
                data: { deployment: { id: string } };
              }
            ).data.deployment.id,
        );
      await eventually(async () => expect(await deliveredIds()).toEqual([before, after]));

      const entries = await auditActions(owner);
      const last = entries.at(-1)?.sequence ?? 0;
      expect(entries.map((entry) => entry.action)).toEqual(
        expect.arrayContaining(["internal.moveOrganization", "internal.completeMove"]),
      );
      await until(
        async () => readStream(owner, stream.id),
        (s) => s.delivered_through === last && s.pending === 0,
        20_000,
      );
      expect((await readStream(owner, stream.id)).delivered_through).toBe(last);
      const sequences = await sequencesReceived(streamed.bucket);
      expect([...new Set(sequences)]).toEqual(Array.from({ length: last }, (_, i) => i + 1));
      expect((await readStream(owner, stream.id)).last_error).toBeNull();

      // And the next entry, written in the new database, follows.
      expect(
        (await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("next") } })).status,
      ).toBe(201);
      await until(
        async () => readStream(owner, stream.id),
        (s) => s.delivered_through === last + 1,
        20_000,
      );
      expect((await readStream(owner, stream.id)).delivered_through).toBe(last + 1);
      expect(errors.lines()).toEqual([]);
    }, 90_000);
  }
});

describe("a delivery handed to its lane naming a database its organization is leaving or left", () => {
  /** An organization in DB with an integration to a fresh bucket, and a delivery pending there that no lane holds. */
  async function pendingDelivery(query = "") {
    const { org, project } = await createOwnedProject();
    const bucket = unique("moving");
    const integration = await integrate(project.id, hook(bucket, query), { changelog: true });
    const event = await writeEvent(project.id, "changelog.created");
    const deliveryId = await writeDelivery(project.id, event.id, integration.id);
    return {
      orgId: org.id,
      projectId: project.id,
      bucket,
      integrationId: integration.id,
      eventId: event.id,
      deliveryId,
    };
  }
  const deliveryIn = (database: D1Database, id: string) =>
    database
      .prepare("SELECT status, attempts FROM webhook_deliveries WHERE id = ?")
      .bind(id)
      .first<{ status: string; attempts: number }>();
  const handOver = (integrationId: string, deliveryId: string, database: string) =>
    laneOf(integrationId).schedule([{ deliveryId, series: 0, manual: false, database }]);

  it("a source that switched (a hand-over sent just before the fence, arriving after the lane was told): sent once, from the new database, and recorded there", async () => {
    const d = await pendingDelivery();
    // What the source of a move holds between its switch and its clean-up: a copy of every row,
    // fenced, marked switched to the database the directory names (here DB, where it lives).
    const copy = async (table: string, id: string) => {
      const row = await env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?`).bind(id).first();
      const columns = Object.keys(row ?? {});
      await env.DB_ORG_2.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
      )
        .bind(...Object.values(row ?? {}))
        .run();
    };
    await copy("organizations", d.orgId);
    await copy("projects", d.projectId);
    await copy("notification_integrations", d.integrationId);
    await copy("events", d.eventId);
    await copy("webhook_deliveries", d.deliveryId);
    await env.DB_ORG_2.prepare(
      "INSERT INTO moving_orgs (org_id, move_id, to_database, fenced, switched) VALUES (?, 'test', 'DB', 1, 1)",
    )
      .bind(d.orgId)
      .run();
    try {
      expect(await handOver(d.integrationId, d.deliveryId, "DB_ORG_2")).toBe(1);
      await eventually(async () =>
        expect(await deliveryIn(env.DB, d.deliveryId)).toEqual({ status: "succeeded", attempts: 1 }),
      );
      await eventually(async () => expect(await laneEntries(d.integrationId)).toEqual([]));
      expect((await received(d.bucket)).map((r) => r.headers["webhook-id"])).toEqual([d.eventId]);
      // The copy was neither sent from nor written to.
      expect(await deliveryIn(env.DB_ORG_2, d.deliveryId)).toEqual({ status: "pending", attempts: 0 });
    } finally {
      await env.DB_ORG_2.prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(d.orgId).run();
      for (const [table, id] of [
        ["webhook_deliveries", d.deliveryId],
        ["events", d.eventId],
        ["notification_integrations", d.integrationId],
        ["projects", d.projectId],
        ["organizations", d.orgId],
      ]) {
        await env.DB_ORG_2.prepare(`DELETE FROM ${table} WHERE id = ?`).bind(id).run();
      }
      await env.DB_ORG_2.prepare("DELETE FROM org_limits WHERE org_id = ?").bind(d.orgId).run();
    }
  });

  it("a fenced organization (a switch under way): nothing is sent or counted while the fence holds; once it is lifted, sent once", async () => {
    const d = await pendingDelivery();
    await env.DB.prepare(
      "INSERT INTO moving_orgs (org_id, move_id, to_database, fenced) VALUES (?, 'test', 'DB_ORG_2', 1)",
    )
      .bind(d.orgId)
      .run();
    try {
      expect(await handOver(d.integrationId, d.deliveryId, "DB")).toBe(1);
      await sleep(2500);
      expect(await received(d.bucket)).toEqual([]);
      expect(await deliveryIn(env.DB, d.deliveryId)).toEqual({ status: "pending", attempts: 0 });
      expect((await laneEntries(d.integrationId)).map((e) => [e.deliveryId, e.tries])).toEqual([
        [d.deliveryId, 0],
      ]);
    } finally {
      await env.DB.prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(d.orgId).run();
    }
    await eventually(async () =>
      expect(await deliveryIn(env.DB, d.deliveryId)).toEqual({ status: "succeeded", attempts: 1 }),
    );
    expect((await received(d.bucket)).map((r) => r.headers["webhook-id"])).toEqual([d.eventId]);
  });

  it("a fence set while an attempt is out: its outcome is refused, no try counted, nothing sent while it holds; once lifted, sent again at once", async () => {
    // The receiver answers 200 a second and a half after each request arrives.
    const d = await pendingDelivery("?delay_ms=1500");
    expect(await handOver(d.integrationId, d.deliveryId, "DB")).toBe(1);
    await eventually(async () => expect(await received(d.bucket)).toHaveLength(1));
    await env.DB.prepare(
      "INSERT INTO moving_orgs (org_id, move_id, to_database, fenced) VALUES (?, 'test', 'DB_ORG_2', 1)",
    )
      .bind(d.orgId)
      .run();
    try {
      // The answer came, its record was refused: not a failed try (which would wait 5 s, and hours
      // at later tries), but held, as a delivery that meets the fence before it is sent.
      await sleep(3000);
      expect(await deliveryIn(env.DB, d.deliveryId)).toEqual({ status: "pending", attempts: 0 });
      expect((await laneEntries(d.integrationId)).map((e) => [e.deliveryId, e.tries])).toEqual([
        [d.deliveryId, 0],
      ]);
      expect(await received(d.bucket)).toHaveLength(1);
    } finally {
      await env.DB.prepare("DELETE FROM moving_orgs WHERE org_id = ?").bind(d.orgId).run();
    }
    const lifted = Date.now();
    await eventually(async () =>
      expect(await deliveryIn(env.DB, d.deliveryId)).toEqual({ status: "succeeded", attempts: 1 }),
    );
    const again = (await received(d.bucket))[1];
    expect(again?.headers["webhook-id"]).toBe(d.eventId);
    // Looked at again within a second of the fence's end (HELD_MS), then the receiver's 1.5 s.
    expect((again?.at ?? Infinity) - lifted).toBeLessThan(2500);
  });
});
