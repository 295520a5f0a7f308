/**
 * API_CONTRACT §31 with §26: a check's conclusion racing a review. A failed check cancels the
 * deployment at once, as a rejection does, so of a failure and a rejection sent together exactly
 * one is recorded and the other is `409` (the deployment is no longer waiting), and no review is
 * recorded after a failure; `gate.approvals` counts the approvals recorded. A release that a
 * check's pass and an approval complete together is one `deployment.released`, and every gate
 * event of the deployment is later than the step it follows. Each interleaving is made exact: what
 * the other request writes is written just before the statement it would have raced
 * (test/helpers/api.ts `interceptStatements`); sent together over HTTP they met 3 times in 20.
 */
import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { type ApiResponse, interceptStatements, once, request } from "../../helpers/api";
import { checkedWorld, conclude, deploymentEvents } from "../../helpers/checks";
import { type ErrorBody, expectError } from "../../helpers/expect";
import { type Caller, createCaller } from "../../helpers/factories";
import {
  type Deployment,
  engineCreateOk,
  listReviews,
  postReview,
  readDeployment,
} from "../../helpers/protection";

const ONE_CHECK = [{ name: "e2e", timeout: 86_400, on_timeout: "fail" as const }];

/** A world whose environment wants one approval and the check `e2e`, with an org admin to review. */
async function world() {
  const w = await checkedWorld(ONE_CHECK, { required_approvals: 1 });
  return { ...w, reviewer: await createCaller(w.org, "admin") };
}

/** The reviews recorded for a deployment, as its owner lists them. */
async function reviewsOf(who: Caller, id: string) {
  const res = await listReviews(who, id);
  expect(res.status, res.raw).toBe(200);
  return res.body.data;
}

/** Every event of a deployment in the log, oldest first as the log orders them (created_at, then id). */
async function eventLog(id: string) {
  const { results } = await env.DB.prepare(
    "SELECT id, type, created_at FROM events WHERE json_extract(data, '$.deployment.id') = ? ORDER BY created_at, id",
  )
    .bind(id)
    .all<{ id: string; type: string; created_at: string }>();
  return results;
}

/**
 * The statements raced, by how they start (Drizzle sets columns in the table's order): the cancel
 * (src/services/deployments/transitions.ts; a failed check's conclusion, which cancels in its own
 * write, src/services/deployments/checks.ts) and a gate's release (src/services/deployments/gate.ts;
 * the last pass's, src/services/deployments/checks.ts).
 */
const CANCEL = 'update "deployments" set "data"';
const RELEASE = 'update "deployments" set "status" = ?, "updated_at" = ?, "gate"';

/** A request whose DB runs `hooks` ahead of the statements they name. */
const intercepted = (
  who: Caller,
  path: string,
  body: Record<string, unknown>,
  hooks: Record<string, () => Promise<void>>,
) =>
  request<Deployment & ErrorBody>("POST", path, {
    key: who.key,
    body,
    bindings: { DB: interceptStatements(hooks) },
  });

const checkPath = (id: string) => `/v1/deployments/${id}/checks/e2e`;
const reviewPath = (id: string) => `/v1/deployments/${id}/reviews`;

describe("each interleaving made exact", () => {
  it("a failed check's write is its cancel: a rejection after it is 409, nothing of it recorded", async () => {
    const w = await world();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    // No moment lies between the failure and its cancel (one compare-and-set writes both), so the
    // first rejection that can follow it meets the deployment cancelled.
    const check = await conclude(w.owner, d.id, "e2e", { conclusion: "failed" });
    expect(check.status, check.raw).toBe(200);
    expect(check.body.status).toBe("cancelled");
    expectError(await postReview(w.reviewer, d.id, { state: "rejected" }), 409, "conflict");
    expect(await reviewsOf(w.owner, d.id)).toEqual([]);
    expect(await deploymentEvents("deployment.reviewed", d.id)).toEqual([]);
  });

  it("a rejection just before a failed check's write: the rejection cancels, the check is 409 and stays pending", async () => {
    const w = await world();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    let rejection: Awaited<ReturnType<typeof postReview>> | undefined;
    const check = await intercepted(
      w.owner,
      checkPath(d.id),
      { conclusion: "failed" },
      {
        [CANCEL]: once(async () => {
          rejection = await postReview(w.reviewer, d.id, { state: "rejected" });
        }),
      },
    );
    expectError(check as ApiResponse<ErrorBody>, 409, "conflict");
    expect(rejection?.status, rejection?.raw).toBe(200);
    expect(rejection?.body.status).toBe("cancelled");
    const after = await readDeployment(w.owner, d.id);
    expect(after.gate?.checks[0]?.state).toBe("pending");
    expect(await deploymentEvents("deployment.check_concluded", d.id)).toEqual([]);
  });

  it("a failed check between a rejection's record and its cancel: 409, the check still pending", async () => {
    const w = await world();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    let check: ApiResponse<ErrorBody> | undefined;
    const rejection = await intercepted(
      w.reviewer,
      reviewPath(d.id),
      { state: "rejected" },
      {
        [CANCEL]: once(async () => {
          check = await conclude(w.owner, d.id, "e2e", { conclusion: "failed" });
        }),
      },
    );
    expect(rejection.status, rejection.raw).toBe(200);
    expect(rejection.body.status).toBe("cancelled");
    expectError(check as ApiResponse<ErrorBody>, 409, "conflict");
    const after = await readDeployment(w.owner, d.id);
    expect(after.gate?.checks[0]?.state).toBe("pending");
    expect(await deploymentEvents("deployment.check_concluded", d.id)).toEqual([]);
  });

  it("an approval recorded, not yet counted, when a failed check writes: the check counts it", async () => {
    const w = await world();
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    const check = await intercepted(
      w.owner,
      checkPath(d.id),
      { conclusion: "failed" },
      {
        // The approval's own statement, as it commits before its request settles the gate.
        [CANCEL]: once(async () => {
          await env.DB.prepare(
            "INSERT INTO deployment_reviews (deployment_id, account_id, project_id, state, comment, created_at) VALUES (?, ?, ?, 'approved', NULL, ?)",
          )
            .bind(d.id, w.reviewer.accountId, w.project.id, new Date().toISOString())
            .run();
        }),
      },
    );
    expect(check.status, check.raw).toBe(200);
    expect(check.body.status).toBe("cancelled");
    expect(check.body.gate?.approvals).toBe(1);
    expect(check.body.gate?.checks[0]?.state).toBe("failed");
  });

  it("two settlings of one release at the same time: one deployment.released", async () => {
    const w = await checkedWorld([], { required_approvals: 1 });
    const [first, second] = [await createCaller(w.org, "admin"), await createCaller(w.org, "admin")];
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    // Its last write ahead of the clock: both settlings take the time just after it, the same.
    await env.DB.prepare("UPDATE deployments SET updated_at = ? WHERE id = ?")
      .bind(new Date(Date.now() + 60_000).toISOString(), d.id)
      .run();
    let late: ApiResponse<ErrorBody> | undefined;
    const approval = await intercepted(
      first,
      reviewPath(d.id),
      { state: "approved" },
      {
        // Between its settling's read and its write, the second review (refused: the count is
        // complete) settles the deployment and releases it.
        [RELEASE]: once(async () => {
          late = await postReview(second, d.id, { state: "approved" });
        }),
      },
    );
    expect(approval.status, approval.raw).toBe(200);
    expectError(late as ApiResponse<ErrorBody>, 409, "conflict");
    expect((await readDeployment(w.owner, d.id)).status).toBe("queued");
    expect(await deploymentEvents("deployment.released", d.id)).toHaveLength(1);
  });

  it("a release in the millisecond of the approval that completes it: its event is the later", async () => {
    const w = await checkedWorld([], { required_approvals: 1 });
    const reviewer = await createCaller(w.org, "admin");
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    // The clock stands still (as it does in a Worker between two inputs): the review and its
    // release read the same time.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 1_000 });
    try {
      expect((await postReview(reviewer, d.id, { state: "approved" })).body.status).toBe("queued");
    } finally {
      vi.useRealTimers();
    }
    const log = await eventLog(d.id);
    expect(log.map((e) => e.type)).toEqual([
      "deployment.waiting",
      "deployment.reviewed",
      "deployment.released",
    ]);
    const [, reviewed, released] = log;
    expect((reviewed?.created_at as string) < (released?.created_at as string), JSON.stringify(log)).toBe(
      true,
    );
  });
});
