/**
 * A deliveries page of more than 100 entries (D1 binds at most 100 parameters per statement),
 * and pages whose attempts are read in the same batch as the page (by its position, order and
 * limit): each delivery gets exactly its own attempts, in order, on every page, both ways.
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import { createOrgWithOwner, createProject } from "../../helpers/factories";

async function seed(attemptsOf: (i: number) => number) {
  const { owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const created = await request<{ id: string }>(
    "POST",
    `/v1/projects/${project.id}/notification-integrations`,
    {
      key: owner.key,
      body: { type: "webhook", url: "https://hooks.example.com/in", configuration: { changelog: true } },
    },
  );
  expect(created.status).toBe(201);
  const now = new Date().toISOString();
  const eventId = newId();
  const expected = new Map<string, number>();
  const statements = [
    env.DB.prepare(
      "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).bind(eventId, project.id, "changelog.created", JSON.stringify({ project_id: project.id }), now, now),
  ];
  for (let i = 0; i < 150; i++) {
    const deliveryId = newId();
    const event = i === 0 ? eventId : newId();
    if (i > 0) {
      statements.push(
        env.DB.prepare(
          "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        ).bind(event, project.id, "changelog.created", JSON.stringify({ project_id: project.id }), now, now),
      );
    }
    statements.push(
      env.DB.prepare(
        "INSERT INTO webhook_deliveries (id, project_id, event_id, integration_id, status, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', 1, ?, ?)",
      ).bind(deliveryId, project.id, event, created.body.id, now, now),
    );
    for (let attempt = 1; attempt <= attemptsOf(i); attempt++) {
      statements.push(
        env.DB.prepare(
          "INSERT INTO delivery_attempts (id, delivery_id, attempt, status_code, error, duration_ms, next_attempt_at, created_at) VALUES (?, ?, ?, 500, ?, 12, NULL, ?)",
        ).bind(newId(), deliveryId, attempt, `HTTP 500 #${attempt} of ${deliveryId}`, now),
      );
    }
    expected.set(deliveryId, attemptsOf(i));
  }
  await env.DB.batch(statements);
  return { owner, integrationId: created.body.id, projectId: project.id, eventId, expected };
}

type DeliveryPage = {
  data: Array<{ id: string; event_id: string; attempt_log: Array<{ attempt: number; error: string }> }>;
  has_more: boolean;
  next_page?: string;
};

it("lists 150 deliveries with their attempts in one page of 240", async () => {
  const { owner, projectId, integrationId } = await seed(() => 1);

  const page = await request<DeliveryPage>(
    "GET",
    `/v1/projects/${projectId}/notification-integrations/${integrationId}/deliveries?limit=240`,
    { key: owner.key },
  );
  expect(page.status).toBe(200);
  expect(page.body.data).toHaveLength(150);
  expect(page.body.has_more).toBe(false);
  expect(page.body.data.every((d) => d.attempt_log.length === 1)).toBe(true);
});

it("pages of deliveries carry exactly their own attempts, in order, in either direction", async () => {
  const { owner, projectId, integrationId, eventId, expected } = await seed((i) => (i % 4) + (i % 2));
  const base = `/v1/projects/${projectId}/notification-integrations/${integrationId}/deliveries`;
  for (const sort of ["created_at", "-created_at"]) {
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const query = `?limit=40&sort_by=${sort}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      const page = await request<DeliveryPage>("GET", base + query, { key: owner.key });
      expect(page.status).toBe(200);
      for (const delivery of page.body.data) {
        const count = expected.get(delivery.id) ?? -1;
        expect(delivery.attempt_log.map((a) => a.attempt)).toEqual(
          Array.from({ length: count }, (_, i) => i + 1),
        );
        for (const a of delivery.attempt_log)
          expect(a.error).toBe(`HTTP 500 #${a.attempt} of ${delivery.id}`);
        seen.push(delivery.id);
      }
      after = page.body.next_page;
    } while (after);
    expect(seen).toHaveLength(150);
    expect(new Set(seen).size).toBe(150);
  }
  // The event's own deliveries list reads its attempts the same way.
  const ofEvent = await request<DeliveryPage>("GET", `/v1/events/${eventId}/deliveries`, { key: owner.key });
  expect(ofEvent.status).toBe(200);
  expect(ofEvent.body.data.map((d) => [d.event_id, d.attempt_log.length])).toEqual([
    [eventId, expected.get(ofEvent.body.data[0]?.id ?? "")],
  ]);
});
