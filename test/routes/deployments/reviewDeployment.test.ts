/**
 * reviewDeployment: POST /v1/deployments/{id}/reviews (API_CONTRACT §26: a reviewer,
 * `deployments:write`; body `{ state: approved | rejected, comment? (≤ 1000) }`; `200` the
 * deployment). Reviewers: the project's members whose role is at least `reviewer_role`, and org
 * owners and admins; another account `403`; the creator (`created_by`) `403` under
 * `prevent_self_review`; a deployment not `waiting` with `approval` in `blocked_by` `409`; a
 * second review by one account `409`; a rejection cancels it at once (and every stack); the
 * approval that completes the count releases it in that request. Audit `reviewDeployment`.
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { brief, reportOk, timelineOf } from "../../helpers/engine";
import {
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { type Caller, createCaller, createStack, projectRoleCallers } from "../../helpers/factories";
import { projectCaller } from "../../helpers/projects";
import {
  approve,
  engineCreateOk,
  listReviews,
  lock,
  postReview,
  protectedWorld,
  publicCreateOk,
  readDeployment,
  reviewsPath,
  type Settings,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";

const APPROVE = { state: "approved" };

/** A project whose default environment needs `settings` (approvals by default), a stack, and its roles. */
async function reviewWorld(settings: Partial<Settings> = { required_approvals: 1 }) {
  const w = await protectedWorld(settings);
  const roles = await projectRoleCallers(w);
  const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
  const admin = await createCaller(w.org, "admin");
  const orgOwner = await createCaller(w.org, "owner");
  return { ...w, ...roles, projectOwner, admin, orgOwner };
}

describe("POST /v1/deployments/{id}/reviews", () => {
  describe("approvals", () => {
    it("an approval short of the count: 200, still waiting, approvals counted, blocked_by approval", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const res = await postReview(w.owner, d.id, APPROVE);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toMatchObject({
        id: d.id,
        status: "waiting",
        gate: { required_approvals: 2, approvals: 1, wait_until: null, blocked_by: ["approval"], checks: [] },
      });
      expect(await readDeployment(w.owner, d.id)).toEqual(res.body);
    });

    it("the approval that completes the count releases it in that request: the 200 already reads queued, blocked_by []", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await approve(w.owner, d.id);
      const res = await postReview(w.admin, d.id, APPROVE);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toMatchObject({
        id: d.id,
        status: "queued",
        gate: { required_approvals: 2, approvals: 2, wait_until: null, blocked_by: [], checks: [] },
      });
      expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["queued"]);
      const read = await request("GET", `/v1/deployments/${d.id}`, { key: w.owner.key });
      expect(read.body).toEqual(res.body);
      expect(res.headers.get("etag")).toMatch(STRONG_ETAG);
      expect(res.headers.get("etag")).toBe(read.headers.get("etag"));
      expect(brief(await timelineOf(w.owner.key, d.id))).toEqual(["status:-:waiting", "status:-:queued"]);
    });

    it("the approvals in, but the wait timer still running: waiting, held by wait_timer alone", async () => {
      const w = await reviewWorld({ required_approvals: 1, wait_timer: 3600 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const res = await postReview(w.owner, d.id, APPROVE);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.status).toBe("waiting");
      expect(res.body.gate).toEqual({ ...d.gate, approvals: 1, blocked_by: ["wait_timer"] });
    });

    it("the approvals in, but the environment locked: waiting, held by the lock alone", async () => {
      const w = await reviewWorld({ required_approvals: 1 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await lock(w.owner, w.environmentId);
      const res = await postReview(w.owner, d.id, APPROVE);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.status).toBe("waiting");
      expect(res.body.gate).toEqual({
        required_approvals: 1,
        approvals: 1,
        wait_until: null,
        blocked_by: ["lock"],
        checks: [],
      });
    });

    it("takes a comment of up to 1000 characters, or none, or null", async () => {
      const w = await reviewWorld({ required_approvals: 3 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      for (const [caller, body] of [
        [w.owner, { state: "approved", comment: "c".repeat(1000) }],
        [w.admin, { state: "approved" }],
        [w.orgOwner, { state: "approved", comment: null }],
      ] as const) {
        const res = await postReview(caller, d.id, body);
        expect(res.status, res.raw).toBe(200);
      }
    });
  });

  describe("rejection", () => {
    it("cancels the deployment at once, and every stack; finished_at set; the timeline records it", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const second = await createStack(w.environmentId);
      const d = await engineCreateOk(w.environmentId, [w.stack.id, second.id]);
      await approve(w.owner, d.id);
      const res = await postReview(w.admin, d.id, { state: "rejected", comment: "not during the sale" });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.status).toBe("cancelled");
      expect(res.body.finished_at).toMatch(TS);
      expect(res.body.started_at).toBeNull();
      expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled", "cancelled"]);
      expect(await readDeployment(w.owner, d.id)).toEqual(res.body);
      const entries = brief(await timelineOf(w.owner.key, d.id));
      expect(entries[0]).toBe("status:-:waiting");
      expect(entries.filter((e) => e === "status:-:cancelled")).toHaveLength(1);
      expect(entries).not.toContain("status:-:queued");
      // Final: nothing more to review.
      expectError(await postReview(w.orgOwner, d.id, APPROVE), 409, "conflict");
    });

    it("a first review may reject", async () => {
      const w = await reviewWorld({ required_approvals: 1, wait_timer: 600 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const res = await postReview(w.owner, d.id, { state: "rejected" });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.status).toBe("cancelled");
    });
  });

  describe("who reviews", () => {
    it("reviewer_role owner: project owners, org owners and org admins review; contributors and viewers 403; non-members 404", async () => {
      const w = await reviewWorld({ required_approvals: 6 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expectError(await postReview(w.contributor, d.id, APPROVE), 403, "forbidden");
      expectError(await postReview(w.viewer, d.id, APPROVE), 403, "forbidden");
      expectError(await postReview(w.outsider, d.id, APPROVE), 404, "not_found");
      expect((await readDeployment(w.owner, d.id)).gate?.approvals).toBe(0);
      let approvals = 0;
      for (const caller of [w.owner, w.projectOwner, w.admin, w.orgOwner]) {
        const res = await postReview(caller, d.id, APPROVE);
        expect(res.status, res.raw).toBe(200);
        expect(res.body.gate?.approvals).toBe(++approvals);
      }
    });

    it("reviewer_role contributor: contributors review too; viewers 403", async () => {
      const w = await reviewWorld({ required_approvals: 6, reviewer_role: "contributor" });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expectError(await postReview(w.viewer, d.id, APPROVE), 403, "forbidden");
      for (const caller of [w.contributor, w.projectOwner, w.admin]) {
        expect((await postReview(caller, d.id, APPROVE)).status).toBe(200);
      }
    });

    it("a role checked when the review comes: a contributor made owner may review", async () => {
      const w = await reviewWorld({ required_approvals: 1 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expectError(await postReview(w.contributor, d.id, APPROVE), 403, "forbidden");
      const promoted = await request(
        "PUT",
        `/v1/projects/${w.project.id}/members/${w.contributor.accountId}`,
        {
          key: w.owner.key,
          body: { role: "owner" },
        },
      );
      expect(promoted.status, promoted.raw).toBe(200);
      expect((await postReview(w.contributor, d.id, APPROVE)).body.status).toBe("queued");
    });

    it("prevent_self_review (default true): the account that created it through the API is 403; the others review", async () => {
      const w = await reviewWorld({ required_approvals: 1 });
      const d = await publicCreateOk(w.owner, w.environmentId, [w.stack.id]);
      expect(d.created_by).toBe(w.owner.accountId);
      expect(d.status).toBe("waiting");
      expectError(await postReview(w.owner, d.id, APPROVE), 403, "forbidden");
      expectError(await postReview(w.owner, d.id, { state: "rejected" }), 403, "forbidden");
      // The same account through another key is the same creator.
      const otherKey = await request("POST", "/v1/api-keys", { key: w.owner.key, body: {} });
      expect(otherKey.status, otherKey.raw).toBe(201);
      expectError(await postReview((otherKey.body as { key: string }).key, d.id, APPROVE), 403, "forbidden");
      expect((await readDeployment(w.owner, d.id)).gate?.approvals).toBe(0);
      expect((await postReview(w.admin, d.id, APPROVE)).body.status).toBe("queued");
    });

    it("prevent_self_review false: the creator may approve its own deployment", async () => {
      const w = await reviewWorld({ required_approvals: 1, prevent_self_review: false });
      const d = await publicCreateOk(w.owner, w.environmentId, [w.stack.id]);
      const res = await postReview(w.owner, d.id, APPROVE);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.status).toBe("queued");
    });

    it("a deployment the engine created (created_by null) may be reviewed by any reviewer, self-review or not", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expect(d.created_by).toBeNull();
      expect((await postReview(w.owner, d.id, APPROVE)).status).toBe(200);
      expect((await postReview(w.admin, d.id, APPROVE)).body.status).toBe("queued");
    });

    it("a creator that is a contributor, under reviewer_role contributor, is still refused its own deployment", async () => {
      const w = await reviewWorld({ required_approvals: 1, reviewer_role: "contributor" });
      const d = await publicCreateOk(w.contributor, w.environmentId, [w.stack.id]);
      expect(d.created_by).toBe(w.contributor.accountId);
      expectError(await postReview(w.contributor, d.id, APPROVE), 403, "forbidden");
      expect((await postReview(w.owner, d.id, APPROVE)).body.status).toBe("queued");
    });
  });

  describe("409", () => {
    it("a second review by the same account, approve or reject; the first stands", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await approve(w.owner, d.id);
      expectError(await postReview(w.owner, d.id, APPROVE), 409, "conflict");
      expectError(await postReview(w.owner, d.id, { state: "rejected" }), 409, "conflict");
      const after = await readDeployment(w.owner, d.id);
      expect(after.status).toBe("waiting");
      expect(after.gate?.approvals).toBe(1);
    });

    it("a deployment waiting without approval in blocked_by (held by the wait timer or the lock alone)", async () => {
      const timer = await reviewWorld({ wait_timer: 3600 });
      const byTimer = await engineCreateOk(timer.environmentId, [timer.stack.id]);
      expect(byTimer.gate?.blocked_by).toEqual(["wait_timer"]);
      expectError(await postReview(timer.owner, byTimer.id, APPROVE), 409, "conflict");
      expectError(await postReview(timer.owner, byTimer.id, { state: "rejected" }), 409, "conflict");
      expect((await readDeployment(timer.owner, byTimer.id)).status).toBe("waiting");

      const locked = await reviewWorld({});
      await lock(locked.owner, locked.environmentId);
      const byLock = await engineCreateOk(locked.environmentId, [locked.stack.id]);
      expect(byLock.gate?.blocked_by).toEqual(["lock"]);
      expectError(await postReview(locked.owner, byLock.id, APPROVE), 409, "conflict");
    });

    it("a deployment whose approvals are in, still held by its timer", async () => {
      const w = await reviewWorld({ required_approvals: 1, wait_timer: 3600 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      await approve(w.owner, d.id);
      expectError(await postReview(w.admin, d.id, APPROVE), 409, "conflict");
      expectError(await postReview(w.admin, d.id, { state: "rejected" }), 409, "conflict");
      expect((await readDeployment(w.owner, d.id)).status).toBe("waiting");
    });

    it("a deployment that never waited, in every status (queued, in_progress, succeeded, failed, cancelled)", async () => {
      const w = await reviewWorld({});
      const targets = [];
      for (const status of ["queued", "in_progress", "succeeded", "failed", "cancelled"]) {
        const d = await engineCreateOk(w.environmentId, [w.stack.id]);
        expect(d.status).toBe("queued");
        if (status === "cancelled") await reportOk(d.id, { status });
        else if (status !== "queued") {
          await reportOk(d.id, { status: "in_progress" });
          if (status !== "in_progress") await reportOk(d.id, { status });
        }
        targets.push({ d, status });
      }
      for (const { d, status } of targets) {
        for (const state of ["approved", "rejected"]) {
          expectError(await postReview(w.owner, d.id, { state }), 409, "conflict");
        }
        expect((await readDeployment(w.owner, d.id)).status).toBe(status);
      }
    });

    it("a deployment released already, and one cancelled while waiting", async () => {
      const w = await reviewWorld({ required_approvals: 1 });
      const released = await engineCreateOk(w.environmentId, [w.stack.id]);
      await approve(w.owner, released.id);
      expectError(await postReview(w.admin, released.id, APPROVE), 409, "conflict");
      const cancelled = await engineCreateOk(w.environmentId, [w.stack.id]);
      const cancel = await request("PATCH", `/v1/deployments/${cancelled.id}/cancel`, { key: w.owner.key });
      expect(cancel.status, cancel.raw).toBe(200);
      expectError(await postReview(w.admin, cancelled.id, APPROVE), 409, "conflict");
    });

    it("approvals sent at once: exactly the required count is recorded, the rest 409 (the count once met, nothing waits for approval)", async () => {
      const w = await reviewWorld({ required_approvals: 2 });
      const reviewers = [w.owner, w.admin, w.orgOwner, await createCaller(w.org, "admin")];
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      const answers = await Promise.all(reviewers.map((who) => postReview(who, d.id, APPROVE)));
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.raw).join("\n")).toEqual([
        200, 200, 409, 409,
      ]);
      for (const a of answers.filter((a) => a.status === 409)) expectError(a, 409, "conflict");
      const read = await readDeployment(w.owner, d.id);
      expect(read.status).toBe("queued");
      expect(read.gate).toEqual({
        required_approvals: 2,
        approvals: 2,
        wait_until: null,
        blocked_by: [],
        checks: [],
      });
      const reviews = await listReviews(w.owner, d.id);
      expect(reviews.body.data).toHaveLength(2);
    });
  });

  describe("body", () => {
    it.each([
      [{}, "state"],
      [{ state: "approve" }, "state"],
      [{ state: "pending" }, "state"],
      [{ state: null }, "state"],
      [{ state: "approved", comment: "c".repeat(1001) }, "comment"],
      [{ state: "approved", comment: 7 }, "comment"],
      [{ state: "approved", account_id: "1111111111111111111111" }, "account_id"],
    ])("refuses %j with 400 naming %s; no review is recorded", async (body, path) => {
      const w = await reviewWorld({ required_approvals: 1 });
      const d = await engineCreateOk(w.environmentId, [w.stack.id]);
      expectError(await postReview(w.owner, d.id, body), 400, "bad_input", path);
      const after = await readDeployment(w.owner, d.id);
      expect(after.status).toBe("waiting");
      expect(after.gate?.approvals).toBe(0);
    });
  });

  it("writes one audit entry, reviewDeployment, by the reviewer; a refused review writes none", async () => {
    const w = await reviewWorld({ required_approvals: 2 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const requestId = `review-${crypto.randomUUID()}`;
    const res = await postReview(w.admin, d.id, APPROVE, { "x-request-id": requestId });
    expect(res.status, res.raw).toBe(200);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "reviewDeployment",
      project_id: w.project.id,
      target_id: d.id,
      actor_type: "api_key",
      actor_account_id: w.admin.accountId,
      actor_api_key_id: w.admin.keyId,
    });
    for (const [caller, id] of [
      [w.admin, `again-${crypto.randomUUID()}`],
      [w.contributor, `contributor-${crypto.randomUUID()}`],
    ] as const) {
      expect(
        (await postReview(caller as Caller, d.id, APPROVE, { "x-request-id": id })).status,
      ).toBeGreaterThanOrEqual(400);
      expect(await rowsOf(id)).toEqual([]);
    }
    // The rejection that cancels writes one entry too.
    const rejectId = `reject-${crypto.randomUUID()}`;
    expect(
      (await postReview(w.owner, d.id, { state: "rejected" }, { "x-request-id": rejectId })).status,
    ).toBe(200);
    expect((await rowsOf(rejectId)).map((r) => r.action)).toEqual(["reviewDeployment"]);
  });

  it("an Idempotency-Key replays the review: the same answer, one review", async () => {
    const w = await reviewWorld({ required_approvals: 2 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await postReview(w.owner, d.id, APPROVE, headers);
    const retry = await postReview(w.owner, d.id, APPROVE, headers);
    expect(first.status, first.raw).toBe(200);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.raw,
      "true",
    ]);
    expect((await readDeployment(w.owner, d.id)).gate?.approvals).toBe(1);
  });

  it("publishes x-required-scope deployments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished("post", "/v1/deployments/{id}/reviews", "reviewDeployment", "deployments:write");
    const w = await reviewWorld({ required_approvals: 1 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    expectMissingScope(
      await postReview(await keyWithout(w.owner, "deployments:write"), d.id, APPROVE),
      "deployments:write",
    );
    expectMissingScope(
      await postReview(await keyWith(w.owner, "deployments:read", "environments:write"), d.id, APPROVE),
      "deployments:write",
    );
    expectError(await postReview(await keyForAnotherProject(w.owner), d.id, APPROVE), 404, "not_found");
    expect((await readDeployment(w.owner, d.id)).gate?.approvals).toBe(0);
    const scoped = await postReview(await keyWith(w.owner, "deployments:write"), d.id, APPROVE);
    expect(scoped.status, scoped.raw).toBe(200);
    expect(scoped.body.status).toBe("queued");
  });

  it("an unknown deployment is 404; a malformed ID is 400 naming it", async () => {
    const w = await reviewWorld();
    expectError(await postReview(w.owner, UNKNOWN_ID, APPROVE), 404, "not_found");
    expectError(await postReview(w.owner, "nope!", APPROVE), 400, "bad_input", "id");
  });

  it("a review changes the deployment's ETag (gate.approvals is a field of the record)", async () => {
    const w = await reviewWorld({ required_approvals: 2 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const before = await request("GET", `/v1/deployments/${d.id}`, { key: w.owner.key });
    await sleep(3);
    const res = await postReview(w.owner, d.id, APPROVE);
    expect(res.headers.get("etag")).not.toBe(before.headers.get("etag"));
  });

  runCommonRouteTests("POST /v1/deployments/{id}/reviews", async () => {
    const w = await protectedWorld({ required_approvals: 1 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    return { method: "POST", path: reviewsPath(d.id), body: APPROVE, caller: w.owner };
  });
});
