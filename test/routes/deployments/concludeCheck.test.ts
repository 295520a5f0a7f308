/** concludeCheck: POST /v1/deployments/{id}/checks/{name} (API_CONTRACT §31), and checks on the protection. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { once } from "../../helpers/api";
import { checkedWorld, conclude, protectWithChecks, TWO_CHECKS } from "../../helpers/checks";
import { brief, timelineOf } from "../../helpers/engine";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { addProjectMember, createCaller, createProjectWithStack } from "../../helpers/factories";
import {
  DEFAULT_SETTINGS,
  engineCreateOk,
  lock,
  protect,
  publicCreateOk,
  putProtection,
  readDeployment,
  readProtection,
  unlock,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";

const pending = (name: string) => ({
  name,
  state: "pending",
  reason: null,
  details_url: null,
  summary: null,
  concluded_at: null,
});

describe("checks on the protection", () => {
  it("0–10 items {name, timeout, on_timeout}, optional in the PUT (left out: none), shown by the protection", async () => {
    const w = await createProjectWithStack();
    const set = await protectWithChecks(w.owner, w.environmentId, TWO_CHECKS);
    expect(set.checks).toEqual(TWO_CHECKS);
    expect((await readProtection(w.owner, w.environmentId)).checks).toEqual(TWO_CHECKS);
    const without = await putProtection(w.owner, w.environmentId, DEFAULT_SETTINGS);
    expect(without.status, without.raw).toBe(200);
    expect(without.body.checks).toEqual([]);
  });

  it("refuses more than 10, a name twice, a name off the pattern, a timeout outside 10–86400, another on_timeout", async () => {
    const w = await createProjectWithStack();
    const put = (checks: unknown) => putProtection(w.owner, w.environmentId, { ...DEFAULT_SETTINGS, checks });
    const one = (fields: Record<string, unknown>) => [
      { name: "e2e", timeout: 60, on_timeout: "fail", ...fields },
    ];
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `c${i}`, timeout: 60, on_timeout: "fail" }));
    expectError(await put(eleven), 400, "bad_input", "checks");
    expectError(await put([...one({}), ...one({ on_timeout: "pass" })]), 400, "bad_input", "checks.1.name");
    for (const name of ["E2E", "-e2e", "", "a".repeat(101), "e2e suite", "é"]) {
      expectError(await put(one({ name })), 400, "bad_input", "checks.0.name");
    }
    for (const timeout of [9, 86_401, 10.5, "60"])
      expectError(await put(one({ timeout })), 400, "bad_input", "checks.0.timeout");
    expectError(await put(one({ on_timeout: "skip" })), 400, "bad_input", "checks.0.on_timeout");
    expectError(await put(one({ extra: 1 })), 400, "bad_input", "checks.0.extra");
    const ten = eleven
      .slice(0, 10)
      .map((c, i) => ({ ...c, name: i === 0 ? "a.b_c-9" : c.name, timeout: i === 1 ? 10 : 86_400 }));
    expect((await put(ten)).status).toBe(200);
    expect((await readProtection(w.owner, w.environmentId)).checks).toHaveLength(10);
  });
});

describe("POST /v1/deployments/{id}/checks/{name}", () => {
  it("a deployment created with checks waits, `check` in blocked_by, each check pending; the protection changing later changes none of them", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect(d.status).toBe("waiting");
    expect(d.gate).toEqual({
      required_approvals: 0,
      approvals: 0,
      wait_until: null,
      blocked_by: ["check"],
      checks: [pending("e2e"), pending("security-scan")],
    });
    await protectWithChecks(w.owner, w.environmentId, [{ name: "other", timeout: 60, on_timeout: "pass" }]);
    expect((await readDeployment(w.owner, d.id)).gate?.checks.map((c) => c.name)).toEqual([
      "e2e",
      "security-scan",
    ]);
    // A deployment that waits without checks has `checks: []`; one that never waited has no gate.
    await protect(w.owner, w.environmentId, { required_approvals: 1 });
    expect((await engineCreateOk(w.environmentId, [w.stack.id])).gate?.checks).toEqual([]);
    await protect(w.owner, w.environmentId, {});
    expect((await engineCreateOk(w.environmentId, [w.stack.id])).gate).toBeNull();
  });

  it("the last pass releases it (queued) when nothing else holds it; the record carries each conclusion", async () => {
    const w = await checkedWorld();
    // Created by the owner: checks are machines, so the deployment's own creator may conclude them.
    const d = await publicCreateOk(w.owner, w.environmentId, [w.stack.id]);
    const first = await conclude(w.owner, d.id, "e2e", {
      conclusion: "passed",
      details_url: "https://ci.example.com/runs/42",
      summary: "312 passed",
    });
    expect(first.status, first.raw).toBe(200);
    expect(first.body.status).toBe("waiting");
    expect(first.body.gate?.checks[0]).toEqual({
      name: "e2e",
      state: "passed",
      reason: null,
      details_url: "https://ci.example.com/runs/42",
      summary: "312 passed",
      concluded_at: expect.stringMatching(TS),
    });
    expect(first.body.gate?.blocked_by).toEqual(["check"]);
    const last = await conclude(w.owner, d.id, "security-scan", { conclusion: "passed" });
    expect(last.body.status).toBe("queued");
    expect(last.body.gate?.blocked_by).toEqual([]);
    expect(last.body.gate?.checks.map((c) => c.state)).toEqual(["passed", "passed"]);
    expect(brief(await timelineOf(w.owner.key, d.id)).filter((e) => e.startsWith("status:-:"))).toEqual([
      "status:-:waiting",
      "status:-:queued",
    ]);
  });

  it("the last pass releases it in its own write: its audit entry records the release, with one timeline entry and one released event", async () => {
    const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
    expect(res.status, res.raw).toBe(200);
    const body = res.body as { status: string; gate: unknown; updated_at: string };
    expect(body.status).toBe("queued");
    const audited = await env.DB.prepare("SELECT changes FROM audit_log WHERE request_id = ?")
      .bind(res.headers.get("x-request-id"))
      .first<{ changes: string }>();
    // §14: the step's own entry holds what it changed, the release included, as the answer shows it.
    expect(JSON.parse(audited?.changes ?? "null")).toEqual({
      status: { from: "waiting", to: "queued" },
      gate: { from: d.gate, to: body.gate },
      updated_at: { from: d.updated_at, to: body.updated_at },
    });
    const concludedAt = (body.gate as { checks: { concluded_at: string }[] }).checks[0]
      ?.concluded_at as string;
    // In the log's order (created_at, then id): the release a moment after the conclusion, never
    // tied with it, and the deployment's updated_at the release's.
    const events = await env.DB.prepare(
      "SELECT type, json_extract(data, '$.deployment.status') AS status, created_at FROM events WHERE json_extract(data, '$.deployment.id') = ? ORDER BY created_at, id",
    )
      .bind(d.id)
      .all<{ created_at: string }>();
    expect(events.results.slice(1)).toEqual([
      { type: "deployment.check_concluded", status: "queued", created_at: concludedAt },
      { type: "deployment.released", status: "queued", created_at: body.updated_at },
    ]);
    expect(concludedAt < body.updated_at).toBe(true);
    expect(brief(await timelineOf(w.owner.key, d.id)).filter((e) => e.startsWith("status:-:"))).toEqual([
      "status:-:waiting",
      "status:-:queued",
    ]);
  });

  it("the last pass while something else holds it takes only `check` out of blocked_by, in its own write and entry", async () => {
    const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]], { required_approvals: 1 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
    const body = res.body as { status: string; gate: { blocked_by: string[] } };
    expect(body).toMatchObject({ status: "waiting", gate: { blocked_by: ["approval"] } });
    const audited = await env.DB.prepare("SELECT changes FROM audit_log WHERE request_id = ?")
      .bind(res.headers.get("x-request-id"))
      .first<{ changes: string }>();
    expect(JSON.parse(audited?.changes ?? "null").gate.to).toEqual(body.gate);
  });

  it("a lock taken after the last pass read the deployment keeps it waiting (blocked by the lock) until the unlock", async () => {
    const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    // Locked in D1 alone, as a lock committed between the conclusion's read and its write: the
    // deployment's gate does not show it yet.
    await env.DB.prepare("UPDATE environment_protections SET locked_at = ? WHERE environment_id = ?")
      .bind(new Date().toISOString(), w.environmentId)
      .run();
    const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ status: "waiting", gate: { blocked_by: ["lock"] } });
    const released = await env.DB.prepare(
      "SELECT count(*) AS n FROM events WHERE type = 'deployment.released' AND json_extract(data, '$.deployment.id') = ?",
    )
      .bind(d.id)
      .first<{ n: number }>();
    expect(released?.n).toBe(0);
    await unlock(w.owner, w.environmentId);
    expect((await readDeployment(w.owner, d.id)).status).toBe("queued");
  });

  describe("the last pass decides from the facts as they are at its write, not as the last settling saw them", () => {
    /** The `changes` of the request's own audit entry. */
    const changesOf = async (res: { headers: Headers }) =>
      JSON.parse(
        (
          await env.DB.prepare("SELECT changes FROM audit_log WHERE request_id = ?")
            .bind(res.headers.get("x-request-id"))
            .first<{ changes: string }>()
        )?.changes ?? "null",
      );
    const oneCheck = () => checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]]);

    it("an unlock committed, its settling not yet run: the pass releases in its own write", async () => {
      const w = await oneCheck();
      await lock(w.owner, w.environmentId);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expect(d.gate?.blocked_by).toEqual(["lock", "check"]);
      await env.DB.prepare("UPDATE environment_protections SET locked_at = NULL WHERE environment_id = ?")
        .bind(w.environmentId)
        .run();
      const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
      expect(res.body).toMatchObject({ status: "queued", gate: { blocked_by: [] } });
      const changes = await changesOf(res);
      expect(changes.status).toEqual({ from: "waiting", to: "queued" });
      expect(changes.gate.to).toEqual(res.body.gate);
      expect(changes.updated_at.to).toBe(res.body.updated_at);
    });

    it("an unlock between the pass's read of the lock and its write: it reads again and releases in its own write", async () => {
      const w = await oneCheck();
      await lock(w.owner, w.environmentId);
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const res = await conclude(
        w.owner,
        d.id,
        "e2e",
        { conclusion: "passed" },
        {
          // The pass as the lock read leaves it: `check` out, held by the lock alone.
          'update "deployments" set "updated_at" = ?, "gate"': once(async () => {
            await env.DB.prepare(
              "UPDATE environment_protections SET locked_at = NULL WHERE environment_id = ?",
            )
              .bind(w.environmentId)
              .run();
          }),
        },
      );
      expect(res.body).toMatchObject({ status: "queued", gate: { blocked_by: [] } });
      expect((await changesOf(res)).status).toEqual({ from: "waiting", to: "queued" });
    });

    it("a wait timer run out, its settling not yet run: the pass releases in its own write", async () => {
      const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]], { wait_timer: 10 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expect(d.gate?.blocked_by).toEqual(["wait_timer", "check"]);
      await env.DB.prepare("UPDATE deployments SET gate = json_set(gate, '$.wait_until', ?) WHERE id = ?")
        .bind(new Date(Date.now() - 1_000).toISOString(), d.id)
        .run();
      const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
      expect(res.body).toMatchObject({ status: "queued", gate: { blocked_by: [] } });
      expect((await changesOf(res)).status).toEqual({ from: "waiting", to: "queued" });
    });

    it("a lock holds a waiting deployment in blocked_by's one order (lock before check), and a pass's entry shows the gate it answers", async () => {
      const w = await checkedWorld();
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await lock(w.owner, w.environmentId);
      expect((await readDeployment(w.owner, d.id)).gate?.blocked_by).toEqual(["lock", "check"]);
      const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
      expect(res.body).toMatchObject({ status: "waiting", gate: { blocked_by: ["lock", "check"] } });
      const changes = await changesOf(res);
      expect(changes.gate.to).toEqual(res.body.gate);
      expect(changes.updated_at.to).toBe(res.body.updated_at);
    });
  });

  it("the last pass leaves it waiting while something else holds it (approvals), by that alone", async () => {
    const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]], { required_approvals: 1 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    expect(d.gate?.blocked_by).toEqual(["approval", "check"]);
    const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
    expect(res.body).toMatchObject({ status: "waiting", gate: { blocked_by: ["approval"] } });
  });

  it("a failure cancels it at once, every stack, the timeline naming the check", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const res = await conclude(w.owner, d.id, "security-scan", {
      conclusion: "failed",
      summary: "CVE-2026-1",
    });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled"]);
    const entries = await timelineOf(w.owner.key, d.id);
    expect(entries.find((e) => e.status === "cancelled" && e.stack_id === null)?.status_reason).toBe(
      "Check security-scan failed.",
    );
    // In the conclusion's own write: its audit entry records the cancel (§14).
    const audited = await env.DB.prepare("SELECT changes FROM audit_log WHERE request_id = ?")
      .bind(res.headers.get("x-request-id"))
      .first<{ changes: string }>();
    const changes = JSON.parse(audited?.changes ?? "null");
    expect(changes.status).toEqual({ from: "waiting", to: "cancelled" });
    expect(changes.gate.to).toEqual(res.body.gate);
    expect(changes.gate.to.blocked_by).toEqual([]);
  });

  it("while the environment is locked, the last pass releases nothing until the unlock", async () => {
    const w = await checkedWorld([TWO_CHECKS[0] as (typeof TWO_CHECKS)[number]]);
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    await lock(w.owner, w.environmentId);
    const res = await conclude(w.owner, d.id, "e2e", { conclusion: "passed" });
    expect(res.body).toMatchObject({ status: "waiting", gate: { blocked_by: ["lock"] } });
    await unlock(w.owner, w.environmentId);
    expect((await readDeployment(w.owner, d.id)).status).toBe("queued");
  });

  it("404 for a name the gate does not hold (or a deployment without a gate); 409 once concluded or no longer waiting", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    expectError(await conclude(w.owner, d.id, "unit", { conclusion: "passed" }), 404, "not_found");
    expectError(await conclude(w.owner, d.id, "E2E", { conclusion: "passed" }), 404, "not_found");
    expectError(await conclude(w.owner, UNKNOWN_ID, "e2e", { conclusion: "passed" }), 404, "not_found");
    expect((await conclude(w.owner, d.id, "e2e", { conclusion: "passed" })).status).toBe(200);
    expectError(await conclude(w.owner, d.id, "e2e", { conclusion: "passed" }), 409, "conflict");
    await conclude(w.owner, d.id, "security-scan", { conclusion: "failed" });
    // Cancelled now: its other check is closed too.
    expectError(await conclude(w.owner, d.id, "e2e", { conclusion: "failed" }), 409, "conflict");
    await protect(w.owner, w.environmentId, {});
    const plain = await engineCreateOk(w.environmentId, [w.stack.id]);
    expectError(await conclude(w.owner, plain.id, "e2e", { conclusion: "passed" }), 404, "not_found");
  });

  it("refuses a conclusion not passed or failed, a details_url not https (or over 2000), a summary over 1000, an unknown field", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    for (const [body, path] of [
      [{ conclusion: "skipped" }, "conclusion"],
      [{}, "conclusion"],
      [{ conclusion: "passed", details_url: "http://ci.example.com/1" }, "details_url"],
      [{ conclusion: "passed", details_url: "not a url" }, "details_url"],
      [{ conclusion: "passed", details_url: `https://ci.example.com/${"x".repeat(2000)}` }, "details_url"],
      [{ conclusion: "passed", summary: "x".repeat(1001) }, "summary"],
      [{ conclusion: "passed", by: "ci" }, "by"],
    ] as const) {
      expectError(await conclude(w.owner, d.id, "e2e", body), 400, "bad_input", path);
    }
    expect((await readDeployment(w.owner, d.id)).gate?.checks[0]?.state).toBe("pending");
  });

  it("needs the project role contributor (a viewer is 403 forbidden) and deployments:write; writes one entry, concludeCheck", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const viewer = await createCaller(w.org, "member", w.owner);
    await addProjectMember(w.owner, w.project.id, viewer, "viewer");
    expectError(await conclude(viewer, d.id, "e2e", { conclusion: "passed" }), 403, "forbidden");
    const contributor = await createCaller(w.org, "member", w.owner);
    await addProjectMember(w.owner, w.project.id, contributor, "contributor");
    const res = await conclude(contributor, d.id, "e2e", { conclusion: "passed" });
    expect(res.status).toBe(200);
    const entries = await env.DB.prepare(
      "SELECT action, target_type, target_id, changes FROM audit_log WHERE request_id = ?",
    )
      .bind(res.headers.get("x-request-id"))
      .all<{ changes: string }>();
    expect(entries.results).toEqual([
      { action: "concludeCheck", target_type: "deployment", target_id: d.id, changes: expect.any(String) },
    ]);
    // `changes` over the deployment's top-level fields (§14): its gate and updated_at, as they were and are.
    const body = res.body as { gate: unknown; updated_at: string };
    expect(JSON.parse(entries.results[0]?.changes ?? "null")).toEqual({
      gate: { from: d.gate, to: body.gate },
      updated_at: { from: d.updated_at, to: body.updated_at },
    });
  });

  runCommonRouteTests("POST /v1/deployments/{id}/checks/{name}", async () => {
    const w = await checkedWorld();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    return {
      method: "POST",
      path: `/v1/deployments/${d.id}/checks/e2e`,
      body: { conclusion: "passed" },
      caller: w.owner,
    };
  });
});
