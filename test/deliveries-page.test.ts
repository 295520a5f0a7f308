/** A deliveries page of more than 100 entries (D1 binds at most 100 parameters per statement). */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { newId } from "../src/lib/ids";
import { request } from "./helpers/api";
import { createOrgWithOwner, createProject } from "./helpers/factories";

it("lists 150 deliveries with their attempts in one page of 240", async () => {
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
      env.DB.prepare(
        "INSERT INTO delivery_attempts (id, delivery_id, attempt, status_code, error, duration_ms, next_attempt_at, created_at) VALUES (?, ?, 1, 500, 'HTTP 500', 12, NULL, ?)",
      ).bind(newId(), deliveryId, now),
    );
  }
  await env.DB.batch(statements);

  const page = await request<{ data: Array<{ attempt_log: unknown[] }>; has_more: boolean }>(
    "GET",
    `/v1/projects/${project.id}/notification-integrations/${created.body.id}/deliveries?limit=240`,
    { key: owner.key },
  );
  expect(page.status).toBe(200);
  expect(page.body.data).toHaveLength(150);
  expect(page.body.has_more).toBe(false);
  expect(page.body.data.every((d) => d.attempt_log.length === 1)).toBe(true);
});
