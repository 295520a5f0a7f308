import { describe, expect, it } from "vitest";
import { DEPLOYMENT_STATUSES, type DeploymentStatus } from "../../src/db/schema";
import { ApiError } from "../../src/errors";
import { canMove, isFinal, planTransition } from "../../src/services/deployments/state";

const NOW = "2026-11-22T10:04:05.123Z";

/** The whole machine written out by hand, so the test does not restate the module's table. */
const LEGAL: ReadonlySet<string> = new Set([
  // API_CONTRACT §26: a waiting deployment's only moves.
  "waiting→queued",
  "waiting→cancelled",
  "queued→in_progress",
  "queued→cancelled",
  "in_progress→succeeded",
  "in_progress→failed",
  "in_progress→cancelled",
]);
const STAYS: ReadonlySet<DeploymentStatus> = new Set(["waiting", "queued", "in_progress"]);

const pairs = DEPLOYMENT_STATUSES.flatMap((from) => DEPLOYMENT_STATUSES.map((to) => [from, to] as const));

describe("deployment state machine", () => {
  it("covers all 36 pairs", () => {
    expect(pairs).toHaveLength(36);
  });

  it.each(pairs)("%s → %s", (from, to) => {
    const key = `${from}→${to}`;
    if (LEGAL.has(key)) {
      expect(canMove(from, to)).toBe(true);
      const plan = planTransition(from, to, NOW);
      expect(plan).toEqual({
        kind: "move",
        status: to,
        ...(to === "in_progress" ? { startedAt: NOW } : {}),
        ...(["succeeded", "failed", "cancelled"].includes(to) ? { finishedAt: NOW } : {}),
      });
    } else if (from === to && STAYS.has(from)) {
      expect(canMove(from, to)).toBe(false);
      expect(planTransition(from, to, NOW)).toEqual({ kind: "stay" });
    } else {
      expect(canMove(from, to)).toBe(false);
      let thrown: unknown;
      try {
        planTransition(from, to, NOW);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).code).toBe("conflict");
      expect((thrown as ApiError).status).toBe(409);
      expect((thrown as ApiError).message).toContain(`\`${from}\``);
    }
  });

  it("final statuses are exactly succeeded, failed and cancelled, and never move", () => {
    expect(DEPLOYMENT_STATUSES.filter(isFinal)).toEqual(["succeeded", "failed", "cancelled"]);
    for (const from of DEPLOYMENT_STATUSES.filter(isFinal)) {
      for (const to of DEPLOYMENT_STATUSES) expect(canMove(from, to)).toBe(false);
    }
  });

  it("names the subject in the conflict message", () => {
    expect(() => planTransition("succeeded", "queued", NOW, "Stack abc")).toThrow(/^Stack abc cannot move/);
  });
});
