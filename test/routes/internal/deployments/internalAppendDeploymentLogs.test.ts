/**
 * internalAppendDeploymentLogs: POST /internal/v1/deployments/{id}/logs (API_CONTRACT §19), the
 * engine's log lines: numbered after the timeline's last entry, all or none.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_TIMELINE_ENTRIES } from "../../../../src/schemas/timeline";
import { internal } from "../../../helpers/api";
import { call, rowsOf } from "../../../helpers/audit-log";
import { brief, logLines, postLogs, reportOk, timelineOf } from "../../../helpers/engine";
import { expectError, TS, UNKNOWN_ID } from "../../../helpers/expect";
import { createDeployment, createProjectWithStack, createStack } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

/** A queued deployment of two stacks, and a stack of the same environment that is not in it. */
async function world() {
  const base = await createProjectWithStack();
  const second = await createStack(base.environmentId);
  const outsider = await createStack(base.environmentId);
  const deployment = await createDeployment(base.environmentId, [base.stack.id, second.id]);
  return { ...base, stacks: [base.stack.id, second.id], outsider, deployment };
}

describe("POST /internal/v1/deployments/{id}/logs", () => {
  it("records the lines in order after the last entry: 202 with the first and last seq", async () => {
    const { owner, stacks, deployment } = await world();
    const res = await postLogs(deployment.id, [
      { message: "Pulling web:2" },
      { message: "warning: cache miss", stream: "stderr", stack_id: stacks[1] },
      { message: "x".repeat(8192), stream: null, stack_id: null },
    ]);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ first_seq: 2, last_seq: 4 });
    const [, ...lines] = await timelineOf(owner.key, deployment.id);
    expect(lines).toEqual([
      {
        seq: 2,
        type: "log",
        created_at: expect.stringMatching(TS),
        stack_id: null,
        status: null,
        status_reason: null,
        stream: "stdout",
        message: "Pulling web:2",
      },
      expect.objectContaining({
        seq: 3,
        stream: "stderr",
        stack_id: stacks[1],
        message: "warning: cache miss",
      }),
      expect.objectContaining({ seq: 4, stream: "stdout", stack_id: null, message: "x".repeat(8192) }),
    ]);
    expect((await postLogs(deployment.id, logLines(1000))).body).toEqual({ first_seq: 5, last_seq: 1004 });
  });

  it("keeps a line as sent: any character, control characters and NUL included", async () => {
    const { owner, deployment } = await world();
    const message = 'tab\there\u0000nul \u001b[31mred\u001b[0m "quoted" \\ é 中 🚀';
    expect((await postLogs(deployment.id, [{ message }])).status).toBe(202);
    expect((await timelineOf(owner.key, deployment.id))[1]?.message).toBe(message);
  });

  it("counts a message's characters, not UTF-16 units: 8,192 emoji are one line", async () => {
    const { owner, deployment } = await world();
    const emoji = "🚀".repeat(8192);
    expect((await postLogs(deployment.id, [{ message: emoji }])).status).toBe(202);
    expect((await timelineOf(owner.key, deployment.id))[1]?.message).toBe(emoji);
    expectError(
      await postLogs(deployment.id, [{ message: `${emoji}x` }]),
      400,
      "bad_input",
      "lines.0.message",
    );
  });

  it("refuses a request with one bad line, and records none of its lines", async () => {
    const { owner, deployment, outsider } = await world();
    const good = { message: "fine" };
    const cases: Array<[unknown, string]> = [
      [[], "lines"],
      [logLines(1001), "lines"],
      [[good, { message: "" }], "lines.1.message"],
      [[good, { message: "y".repeat(8193) }], "lines.1.message"],
      [[good, { message: "a\ud800b" }], "lines.1.message"],
      [[good, { message: 42 }], "lines.1.message"],
      [[good, {}], "lines.1.message"],
      [[good, { message: "m", stream: "stdin" }], "lines.1.stream"],
      [[good, { message: "m", stack_id: "not an id" }], "lines.1.stack_id"],
      [[good, { message: "m", level: "info" }], "lines.1.level"],
      [[good, { message: "m", stack_id: outsider.id }], "lines.1.stack_id"],
      [[good, { message: "m", stack_id: UNKNOWN_ID }], "lines.1.stack_id"],
    ];
    for (const [lines, path] of cases) {
      const res = await internal("POST", `/deployments/${deployment.id}/logs`, { lines });
      expectError(res, 400, "bad_input", path);
    }
    expectError(
      await internal("POST", `/deployments/${deployment.id}/logs`, { lines: [good], extra: 1 }),
      400,
      "bad_input",
      "extra",
    );
    expect(brief(await timelineOf(owner.key, deployment.id))).toEqual(["status:-:queued"]);
  });

  it("a final deployment's log is closed: 409, nothing recorded", async () => {
    const { owner, deployment } = await world();
    await reportOk(deployment.id, { status: "in_progress" });
    await reportOk(deployment.id, { status: "succeeded" });
    const before = await timelineOf(owner.key, deployment.id);
    const res = await postLogs(deployment.id, logLines(2));
    expectError(res, 409, "conflict");
    expect(res.body.message).toMatch(/succeeded/);
    expect(await timelineOf(owner.key, deployment.id)).toEqual(before);
  });

  it("a timeline holds at most 100,000 entries: the lines that would pass it are 409, all of them", async () => {
    const { deployment } = await world();
    // 99,998 entries after the first, written straight to D1 (as 100 requests of 1,000 lines would).
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO deployment_timeline (deployment_id, seq, type, created_at, stream, message)
       SELECT ?1, i, 'log', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'stdout', 'filler' FROM n`,
    )
      .bind(deployment.id, MAX_TIMELINE_ENTRIES - 1)
      .run();
    const two = await postLogs(deployment.id, logLines(2));
    expectError(two, 409, "conflict", "lines");
    expect((await postLogs(deployment.id, logLines(1))).body).toEqual({
      first_seq: MAX_TIMELINE_ENTRIES,
      last_seq: MAX_TIMELINE_ENTRIES,
    });
    expectError(await postLogs(deployment.id, logLines(1)), 409, "conflict");
    const { count } = (await env.DB.prepare(
      "SELECT count(*) AS count FROM deployment_timeline WHERE deployment_id = ?",
    )
      .bind(deployment.id)
      .first<{ count: number }>()) ?? { count: 0 };
    expect(count).toBe(MAX_TIMELINE_ENTRIES);
    // A status change is still recorded: the limit is on the engine's lines, never on a transition.
    await reportOk(deployment.id, { status: "cancelled" });
    expect(
      (
        await env.DB.prepare("SELECT max(seq) AS last FROM deployment_timeline WHERE deployment_id = ?")
          .bind(deployment.id)
          .first<{ last: number }>()
      )?.last,
    ).toBe(MAX_TIMELINE_ENTRIES + 3);
  });

  it("an unknown deployment is 404, a malformed id 400", async () => {
    expectError(await postLogs(UNKNOWN_ID, logLines(1)), 404, "not_found");
    expectError(await postLogs("nope", logLines(1)), 400, "bad_input");
  });

  it("writes one audit entry per request, naming how far the timeline went, never a line", async () => {
    const { project, deployment } = await world();
    const res = await call<{ first_seq: number }>("POST", `/internal/v1/deployments/${deployment.id}/logs`, {
      admin: true,
      body: { lines: [{ message: "SECRET_TOKEN=abc" }, { message: "two" }] },
    });
    expect(res.status).toBe(202);
    const rows = await rowsOf(res.requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "internal.appendDeploymentLogs",
      target_type: "deployment",
      target_id: deployment.id,
      project_id: project.id,
      actor_type: "admin",
    });
    expect(JSON.parse(rows[0]?.changes as string)).toEqual({ last_seq: { from: 1, to: 3 } });
    expect(JSON.stringify(rows)).not.toContain("SECRET_TOKEN");
    const refused = await call("POST", `/internal/v1/deployments/${deployment.id}/logs`, {
      admin: true,
      body: { lines: [{ message: "m", stack_id: UNKNOWN_ID }] },
    });
    expect(refused.status).toBe(400);
    expect(await rowsOf(refused.requestId)).toEqual([]);
  });

  runInternalRouteTests("POST /internal/v1/deployments/{id}/logs", async () => {
    const { deployment } = await world();
    return {
      method: "POST",
      path: `/internal/v1/deployments/${deployment.id}/logs`,
      body: { lines: logLines(1) },
    };
  });
});
