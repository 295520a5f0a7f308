/** The cron: events committed but never handed to the queue are fanned out even when the queue is idle. */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { runCron } from "../helpers/cron";
import { createOrgWithOwner, createProject } from "../helpers/factories";

const enqueuedAt = async (id: string) =>
  (
    await env.DB.prepare("SELECT enqueued_at FROM events WHERE id = ?")
      .bind(id)
      .first<{ enqueued_at: string | null }>()
  )?.enqueued_at;

it("the scheduled handler sweeps stale unpublished events and leaves fresh ones", async () => {
  const { owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const insert = (id: string, createdAt: string) =>
    env.DB.prepare(
      "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at) VALUES (?, ?, ?, ?, NULL, ?)",
    )
      .bind(id, project.id, "changelog.created", JSON.stringify({ project_id: project.id }), createdAt)
      .run();
  const staleId = `stale${crypto.randomUUID().replace(/-/g, "").slice(0, 17)}`;
  const freshId = `fresh${crypto.randomUUID().replace(/-/g, "").slice(0, 17)}`;
  await insert(staleId, new Date(Date.now() - 10 * 60_000).toISOString());
  await insert(freshId, new Date().toISOString());

  await runCron();

  expect(await enqueuedAt(staleId)).toBeTruthy();
  expect(await enqueuedAt(freshId)).toBeNull();
});
