/**
 * Writers racing over one timeline (API_CONTRACT §19), as real concurrent requests: `seq` has no
 * gap and no repeat, every change has its entries and no entry lacks its change, and a log
 * request is recorded whole before the end or refused whole.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  brief,
  deploymentOfStacks,
  logLines,
  postLogs,
  report,
  reportOk,
  timelineOf,
} from "../../helpers/engine";

const world = deploymentOfStacks;

describe("racing writers", () => {
  it("log lines posted while stacks change status: one numbering, no gap, no repeat, each request's lines together and in order", async () => {
    const { owner, stacks, deployment } = await world(6);
    await reportOk(deployment.id, { status: "in_progress" });
    const logs = Array.from({ length: 12 }, (_, i) => postLogs(deployment.id, logLines(25, `r${i}`)));
    const moves = stacks.map((id) =>
      report(deployment.id, { status: "in_progress", stacks: [{ id, status: "in_progress" }] }),
    );
    const [logAnswers, moveAnswers] = await Promise.all([Promise.all(logs), Promise.all(moves)]);
    for (const res of [...logAnswers, ...moveAnswers]) expect(res.status, res.raw).toBeLessThan(300);
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(timeline.map((e) => e.seq)).toEqual(timeline.map((_, i) => i + 1));
    expect(timeline.filter((e) => e.type === "log")).toHaveLength(12 * 25);
    for (const [i, res] of logAnswers.entries()) {
      const { first_seq, last_seq } = res.body;
      expect(last_seq - first_seq).toBe(24);
      expect(timeline.slice(first_seq - 1, last_seq).map((e) => e.message)).toEqual(
        logLines(25, `r${i}`).map((l) => l.message),
      );
    }
    // Each stack entered `in_progress` once, whoever won each compare-and-set.
    for (const id of stacks) {
      expect(
        brief(timeline).filter((b) => b === `status:${id}:in_progress`),
        id,
      ).toHaveLength(1);
    }
  });

  it("log lines racing the end: each request is recorded whole before the final entry, or refused whole", async () => {
    const { owner, deployment } = await world(2);
    await reportOk(deployment.id, { status: "in_progress" });
    const logs = Array.from({ length: 15 }, (_, i) => postLogs(deployment.id, logLines(10, `r${i}`)));
    const end = reportOk(deployment.id, { status: "succeeded" });
    const [answers] = await Promise.all([Promise.all(logs), end]);
    const timeline = await timelineOf(owner.key, deployment.id);
    const final = timeline.find((e) => e.stack_id === null && e.status === "succeeded");
    expect(final).toBeDefined();
    let recorded = 0;
    for (const res of answers) {
      if (res.status === 202) {
        recorded++;
        expect(res.body.last_seq).toBeLessThan(final?.seq ?? 0);
      } else {
        expect([res.status, res.body.code]).toEqual([409, "conflict"]);
      }
    }
    expect(timeline.filter((e) => e.type === "log")).toHaveLength(recorded * 10);
    expect(timeline.map((e) => e.seq)).toEqual(timeline.map((_, i) => i + 1));
    expect(timeline[timeline.length - 1]?.type).toBe("status");
  });

  it("a cancel racing the engine's start: the entries of exactly the moves that happened", async () => {
    for (let round = 0; round < 3; round++) {
      const { owner, deployment } = await world(1);
      const [cancel, start] = await Promise.all([
        request("PATCH", `/v1/deployments/${deployment.id}/cancel`, { key: owner.key }),
        report(deployment.id, { status: "in_progress" }),
      ]);
      expect(cancel.status).toBe(200);
      const statuses = brief(await timelineOf(owner.key, deployment.id)).filter((b) =>
        b.startsWith("status:-:"),
      );
      expect(statuses).toEqual(
        start.status === 200
          ? ["status:-:queued", "status:-:in_progress", "status:-:cancelled"]
          : ["status:-:queued", "status:-:cancelled"],
      );
    }
  });
});
