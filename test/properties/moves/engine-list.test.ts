/**
 * API_CONTRACT §32 "While it moves, every request … answers as it would otherwise", for the list
 * across every organization database (§20's `GET /internal/v1/deployments`, the engine's queue):
 * a moving organization's deployment is listed once, and as it is, while its copy is being made in
 * the target and while the switched move's leftovers wait for their cleanup in the source.
 */
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../../src/db/pagination";
import type { MoveProgress } from "../../../src/services/moves/progress";
import { type ApiResponse, internal } from "../../helpers/api";
import { createOrgWithOwnerIn, type OrgDatabase } from "../../helpers/databases";
import { createDeployment, createEnvironment, createProject, createStack } from "../../helpers/factories";
import { readMove, recorded, runSaving } from "../../helpers/moves";

class Stop extends Error {}

/** Runs the move on from `progress` until its next step would be in `phase`; returns that step's progress. */
async function runUntil(progress: MoveProgress, phase: MoveProgress["phase"]): Promise<MoveProgress> {
  let saved = progress;
  await expect(
    runSaving(progress, (step) => {
      saved = step;
      if (step.phase === phase) throw new Stop();
    }),
  ).rejects.toThrow(Stop);
  return saved;
}

/**
 * How many times `deployment` is in the engine's list of deployments in `status`: every page from
 * just before it was created (the suite's other deployments fill the pages before it).
 */
async function listed(deployment: { id: string; created_at: string }, status: string): Promise<number> {
  const before = new Date(Date.parse(deployment.created_at) - 1).toISOString();
  let after: string | undefined = encodeCursor("asc", `status=${status}`, before, "1111111111111111111111");
  let count = 0;
  for (let pages = 0; after !== undefined && pages < 500; pages++) {
    const res: ApiResponse<{ data: { id: string }[]; has_more: boolean; next_page?: string }> =
      await internal("GET", `/deployments?status=${status}&limit=240&after=${encodeURIComponent(after)}`);
    expect(res.status, res.raw).toBe(200);
    count += res.body.data.filter((d) => d.id === deployment.id).length;
    after = res.body.has_more ? res.body.next_page : undefined;
  }
  return count;
}

describe("the engine's list while an organization moves", () => {
  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const satisfies [OrgDatabase, OrgDatabase][]) {
    it(`${from} → ${to}: a deployment listed once, as it is, while copied and while its leftovers wait`, async () => {
      const { org, owner } = await createOrgWithOwnerIn(from);
      const project = await createProject(owner);
      const environment = await createEnvironment(project.id);
      const stack = await createStack(environment.id);
      const queued = await createDeployment(environment.id, [stack.id]);
      const progress = await recorded(org.id, from, to);

      // Copied into the target, not switched: the source's row is the one listed.
      let saved = await runUntil(progress, "catchup");
      expect(await listed(queued, "queued")).toBe(1);
      // The engine starts it in the source: the copy, behind, does not list it as queued.
      const started = await internal("PATCH", `/deployments/${queued.id}`, { status: "in_progress" });
      expect(started.status, started.raw).toBe(200);
      expect(await listed(queued, "queued")).toBe(0);
      expect(await listed(queued, "in_progress")).toBe(1);

      // Switched, its leftovers in the source not yet removed: the target's row is the one listed.
      saved = await runUntil(saved, "switched");
      expect((await readMove(progress.move.id)).state).toBe("switching");
      const finished = await internal("PATCH", `/deployments/${queued.id}`, { status: "succeeded" });
      expect(finished.status, finished.raw).toBe(200);
      expect(await listed(queued, "in_progress")).toBe(0);
      expect(await listed(queued, "succeeded")).toBe(1);

      // Its leftovers being removed (the source's fence kept until they are gone): still once, as
      // it is, not also as the source's stale row has it.
      saved = await runUntil(saved, "cleanup");
      expect(await listed(queued, "in_progress")).toBe(0);
      expect(await listed(queued, "succeeded")).toBe(1);

      await runSaving(saved, () => {});
      expect((await readMove(progress.move.id)).state).toBe("completed");
      expect(await listed(queued, "succeeded")).toBe(1);
    }, 60_000);
  }
});
