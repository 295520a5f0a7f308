/**
 * Timeline retention (API_CONTRACT §19): kept 30 days after the deployment ends, then deleted by
 * the daily cron in bounded chunks; deleted at once with the deployment.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../../src/context";
import { purgeOldTimelines } from "../../../src/services/deployments/timeline-retention";
import { request } from "../../helpers/api";
import { RETENTION_CRON, runCron } from "../../helpers/cron";
import { logLines, postLogs, reportOk, timelineOf } from "../../helpers/engine";
import { createDeployment, createProjectWithStack } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { parseEventStream } from "../../helpers/openapi";

const DAY_MS = 86_400_000;

/** Makes every entry of a deployment's timeline (its end among them) `days` old. */
async function age(deploymentId: string, days: number) {
  await env.DB.prepare("UPDATE deployment_timeline SET created_at = ?1 WHERE deployment_id = ?2")
    .bind(new Date(Date.now() - days * DAY_MS).toISOString(), deploymentId)
    .run();
}

const entriesOf = async (deploymentId: string) =>
  (
    await env.DB.prepare("SELECT seq FROM deployment_timeline WHERE deployment_id = ? ORDER BY seq")
      .bind(deploymentId)
      .all<{ seq: number }>()
  ).results.map((r) => r.seq);

describe("timeline retention", () => {
  captureLogs("log");

  it("the daily cron deletes the timelines of deployments that ended more than 30 days ago, and nothing else", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deploy = () => createDeployment(environmentId, [stack.id]);
    const [old, recent, running] = [await deploy(), await deploy(), await deploy()];
    for (const d of [old, recent]) {
      await postLogs(d.id, logLines(3));
      await reportOk(d.id, { status: "cancelled" });
    }
    await reportOk(running.id, { status: "in_progress" });
    await age(old.id, 31);
    await age(recent.id, 29.9);
    // A deployment still running keeps its timeline, however old its entries.
    await age(running.id, 90);
    await runCron(RETENTION_CRON);
    expect(await entriesOf(old.id)).toEqual([]);
    expect(await entriesOf(recent.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await entriesOf(running.id)).toEqual([1, 2]);
    // The deployment stays; its timeline reads empty, and its stream ends at once.
    expect((await request("GET", `/v1/deployments/${old.id}`, { key: owner.key })).status).toBe(200);
    expect(await timelineOf(owner.key, old.id)).toEqual([]);
    const stream = await request("GET", `/v1/deployments/${old.id}/timeline`, {
      key: owner.key,
      headers: { accept: "text/event-stream" },
    });
    expect(parseEventStream(stream.raw).map((e) => e.event)).toEqual(["end"]);
  });

  it("works in bounded chunks, oldest first, the final entry of a timeline last, and goes on where it stopped", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const a = await createDeployment(environmentId, [stack.id]);
    const b = await createDeployment(environmentId, [stack.id]);
    for (const d of [a, b]) {
      await postLogs(d.id, logLines(4));
      await reportOk(d.id, { status: "cancelled" });
    }
    await age(a.id, 40);
    await age(b.id, 35);
    const ctx = createServiceContext({ env, requestId: "timeline-retention" });
    // Seven entries each; the run's other old timelines (other tests') may come first, so the
    // bounded run is aimed at these two by a cutoff between them and everything younger.
    const now = Date.now();
    const first = await purgeOldTimelines(ctx, now, { batch: 3, maxStatements: 2 });
    expect(first).toEqual({ entries: 3, statements: 2, done: false });
    const rest = await purgeOldTimelines(ctx, now);
    expect(rest.done).toBe(true);
    expect(await entriesOf(a.id)).toEqual([]);
    expect(await entriesOf(b.id)).toEqual([]);
  });

  it("a timeline cut short keeps its final entry until its last chunk", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    await postLogs(d.id, logLines(5));
    await reportOk(d.id, { status: "cancelled" });
    // Older than anything else the shared database holds, so the run starts with it.
    await env.DB.prepare(
      "UPDATE deployment_timeline SET created_at = '2000-01-01T00:00:00.000Z' WHERE deployment_id = ?",
    )
      .bind(d.id)
      .run();
    const ctx = createServiceContext({ env, requestId: "timeline-retention-order" });
    // Seq 7 is its own `cancelled`; its stack's (8) follows it.
    await purgeOldTimelines(ctx, Date.now(), { batch: 4, maxStatements: 2 });
    expect(await entriesOf(d.id)).toEqual([5, 6, 7, 8]);
    await purgeOldTimelines(ctx, Date.now(), { batch: 2, maxStatements: 2 });
    expect(await entriesOf(d.id)).toEqual([7, 8]);
    // The stack's entry, then the final entry, alone now, in the same round.
    await purgeOldTimelines(ctx, Date.now(), { batch: 2, maxStatements: 2 });
    expect(await entriesOf(d.id)).toEqual([]);
  });

  it("the deletion reads the partial index of final entries, not the table", async () => {
    const { results } = await env.DB.prepare(
      "EXPLAIN QUERY PLAN SELECT deployment_id FROM deployment_timeline WHERE stack_id IS NULL AND status IN ('succeeded', 'failed', 'cancelled') AND created_at < ? ORDER BY created_at LIMIT 1000",
    )
      .bind(new Date().toISOString())
      .all<{ detail: string }>();
    const plan = results.map((r) => r.detail).join("\n");
    expect(plan).toMatch(/USING INDEX deployment_timeline_finished_idx/);
    expect(plan).not.toMatch(/TEMP B-TREE/);
  });

  it("a deployment deleted with its project takes its timeline with it", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    await postLogs(d.id, logLines(2));
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    expect(await entriesOf(d.id)).toEqual([]);
  });
});
