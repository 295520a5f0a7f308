/**
 * listDeploymentReviews: GET /v1/deployments/{id}/reviews (API_CONTRACT §26: viewer,
 * `deployments:read`; an envelope of reviews `{ account_id, state, comment, created_at }` under
 * §4's rules: `after`, `limit` 1–240 default 20, `sort_by` with `-created_at` the default,
 * `next_page` only while `has_more`, cursors bound to their order; §12's weak ETag of a list).
 * A deployment holds at most a handful of reviews (one per account, and `required_approvals` is at
 * most 6), so the rules are checked on lists of up to six.
 */
import { describe, expect, it } from "vitest";
import {
  expectMissingScope,
  expectNotModified,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  WEAK_ETAG,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { type Caller, createCaller, projectRoleCallers } from "../../helpers/factories";
import {
  engineCreateOk,
  listReviews,
  postReview,
  protectedWorld,
  type Review,
  reviewsPath,
} from "../../helpers/protection";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";

/**
 * A waiting deployment (6 approvals required, contributors review) with `count` reviews by as
 * many accounts, in order, the last one a rejection when `reject` (each a few ms apart).
 */
async function reviewed(count: number, reject = false) {
  const w = await protectedWorld({ required_approvals: 6, reviewer_role: "contributor" });
  const roles = await projectRoleCallers(w);
  const d = await engineCreateOk(w.environmentId, [w.stack.id]);
  const reviewers: Caller[] = [];
  const made: Array<{ account_id: string; state: string; comment: string | null }> = [];
  for (let i = 0; i < count; i++) {
    const reviewer = await createCaller(w.org, "admin");
    const state = reject && i === count - 1 ? "rejected" : "approved";
    const comment = i % 2 === 0 ? `review ${i}` : null;
    const res = await postReview(reviewer, d.id, comment === null ? { state } : { state, comment });
    expect(res.status, res.raw).toBe(200);
    reviewers.push(reviewer);
    made.push({ account_id: reviewer.accountId, state, comment });
    await sleep(3);
  }
  return { ...w, ...roles, d, reviewers, made };
}

const accounts = (reviews: Review[]) => reviews.map((r) => r.account_id);

describe("GET /v1/deployments/{id}/reviews", () => {
  it("a deployment without reviews: an empty page", async () => {
    const { owner, d } = await reviewed(0);
    const res = await listReviews(owner, d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toEqual({ data: [], has_more: false });
  });

  it("every review as { account_id, state, comment, created_at }, newest first by default; comment null when none was given", async () => {
    const { owner, d, made } = await reviewed(3);
    const res = await listReviews(owner, d.id);
    expect(res.status, res.raw).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body).not.toHaveProperty("next_page");
    for (const review of res.body.data) {
      expect(Object.keys(review).sort()).toEqual(["account_id", "comment", "created_at", "state"]);
      expect(review.created_at).toMatch(TS);
    }
    expect(res.body.data.map(({ created_at: _, ...r }) => r)).toEqual([...made].reverse());
  });

  it("a rejection is listed too; refused reviews are not", async () => {
    const { owner, contributor, viewer, d, made, reviewers } = await reviewed(2, true);
    // Refused after the fact: the deployment is final, the viewer may not review, the first reviewer already did.
    for (const caller of [contributor, viewer, reviewers[0] as Caller]) {
      expect((await postReview(caller, d.id, { state: "approved" })).status).toBeGreaterThanOrEqual(400);
    }
    const res = await listReviews(owner, d.id);
    expect(res.body.data.map((r) => [r.account_id, r.state])).toEqual(
      [...made].reverse().map((r) => [r.account_id, r.state]),
    );
    expect(res.body.data[0]?.state).toBe("rejected");
  });

  it("sort_by created_at and +created_at ascending, -created_at descending; ordered by created_at", async () => {
    const { owner, d, made } = await reviewed(4);
    const ascending = made.map((r) => r.account_id);
    for (const sort of ["created_at", "%2Bcreated_at"]) {
      const res = await listReviews(owner, d.id, `sort_by=${sort}`);
      expect(res.status, res.raw).toBe(200);
      expect(accounts(res.body.data), sort).toEqual(ascending);
    }
    const desc = await listReviews(owner, d.id, "sort_by=-created_at");
    expect(accounts(desc.body.data)).toEqual([...ascending].reverse());
    const times = desc.body.data.map((r) => r.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    for (const sort of ["name", "state", "account_id", "-state"]) {
      expectError(await listReviews(owner, d.id, `sort_by=${sort}`), 400, "bad_input", "sort_by");
    }
  });

  it("pages: limit 1–240, next_page standard base64 while has_more, omitted on the last page; every order walks without repeating or skipping", async () => {
    const { owner, d, made } = await reviewed(5);
    const ascending = made.map((r) => r.account_id);
    for (const [sort, expected] of [
      ["created_at", ascending],
      ["-created_at", [...ascending].reverse()],
      ["", [...ascending].reverse()],
    ] as const) {
      for (const limit of [1, 2, 3]) {
        const seen: string[] = [];
        let after: string | undefined;
        for (let pages = 0; pages < 10; pages++) {
          const query = [
            `limit=${limit}`,
            sort ? `sort_by=${sort}` : "",
            after ? `after=${encodeURIComponent(after)}` : "",
          ]
            .filter(Boolean)
            .join("&");
          const res = await listReviews(owner, d.id, query);
          expect(res.status, res.raw).toBe(200);
          expect(res.body.data.length).toBeLessThanOrEqual(limit);
          seen.push(...accounts(res.body.data));
          if (!res.body.has_more) {
            expect(res.body).not.toHaveProperty("next_page");
            break;
          }
          expect(res.body.next_page).toMatch(/^[A-Za-z0-9+/=]+$/);
          after = res.body.next_page;
        }
        expect(seen, `${sort || "default"} limit ${limit}`).toEqual(expected);
      }
    }
    for (const limit of ["1", "240"]) {
      expect((await listReviews(owner, d.id, `limit=${limit}`)).body.data.length).toBe(
        Math.min(Number(limit), 5),
      );
    }
    for (const limit of ["0", "241", "-1", "abc", "1.5"]) {
      expectError(await listReviews(owner, d.id, `limit=${limit}`), 400, "bad_input", "limit");
    }
  });

  it("the default limit is 20: six reviews fit one page", async () => {
    const { owner, d } = await reviewed(6, true);
    const res = await listReviews(owner, d.id);
    expect(res.body.data).toHaveLength(6);
    expect(res.body.has_more).toBe(false);
  });

  it("a cursor that does not decode, or of another order, is 400; created_at and +created_at are one order; URL-safe and space-for-plus are read", async () => {
    const { owner, d, made } = await reviewed(4);
    for (const after of ["%%%", "bm90IGEgY3Vyc29y", "e30=", "!!"]) {
      expectError(await listReviews(owner, d.id, `after=${after}`), 400, "bad_input");
    }
    const first = await listReviews(owner, d.id, "limit=2&sort_by=created_at");
    const cursor = first.body.next_page ?? "";
    const expected = made.slice(2, 4).map((r) => r.account_id);
    const plus = await listReviews(
      owner,
      d.id,
      `limit=2&sort_by=%2Bcreated_at&after=${encodeURIComponent(cursor)}`,
    );
    expect(accounts(plus.body.data)).toEqual(expected);
    for (const other of ["sort_by=-created_at&", ""]) {
      expectError(
        await listReviews(owner, d.id, `limit=2&${other}after=${encodeURIComponent(cursor)}`),
        400,
        "bad_input",
      );
    }
    const urlSafe = cursor.replaceAll("+", "-").replaceAll("/", "_");
    const safe = await listReviews(
      owner,
      d.id,
      `limit=2&sort_by=created_at&after=${encodeURIComponent(urlSafe)}`,
    );
    expect(accounts(safe.body.data)).toEqual(expected);
    const spaced = encodeURIComponent(cursor).replaceAll("%2B", "+");
    const withSpace = await listReviews(owner, d.id, `limit=2&sort_by=created_at&after=${spaced}`);
    expect(withSpace.status, withSpace.raw).toBe(200);
    expect(accounts(withSpace.body.data)).toEqual(expected);
  });

  it("a weak ETag of the body; If-None-Match is 304 until a review is added", async () => {
    const { owner, d, org } = await reviewed(2);
    const path = reviewsPath(d.id);
    const res = await listReviews(owner, d.id);
    const etag = res.headers.get("etag") ?? "";
    expect(etag).toMatch(WEAK_ETAG);
    await expectNotModified(owner.key, path, etag);
    await expectNotModified(owner.key, path, "*");
    await expectNotModified(owner.key, path, etag.slice(2));
    const another = await createCaller(org, "admin");
    expect((await postReview(another, d.id, { state: "approved" })).status).toBe(200);
    const changed = await listReviews(owner, d.id, "", { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).toMatch(WEAK_ETAG);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });

  it("viewers and contributors read it; a member outside the project 404", async () => {
    const { viewer, contributor, outsider, d } = await reviewed(1);
    for (const caller of [viewer, contributor]) {
      const res = await listReviews(caller, d.id);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data).toHaveLength(1);
    }
    expectError(await listReviews(outsider, d.id), 404, "not_found");
  });

  it("publishes x-required-scope deployments:read; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished("get", "/v1/deployments/{id}/reviews", "listDeploymentReviews", "deployments:read");
    const { owner, d } = await reviewed(1);
    expectMissingScope(
      await listReviews(await keyWithout(owner, "deployments:read"), d.id),
      "deployments:read",
    );
    expectMissingScope(
      await listReviews(await keyWith(owner, "environments:read"), d.id),
      "deployments:read",
    );
    expectError(await listReviews(await keyForAnotherProject(owner), d.id), 404, "not_found");
    expect((await listReviews(await keyWith(owner, "deployments:read"), d.id)).status).toBe(200);
  });

  it("an unknown deployment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await reviewed(0);
    expectError(await listReviews(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await listReviews(owner, "nope!"), 400, "bad_input", "id");
  });

  runCommonRouteTests("GET /v1/deployments/{id}/reviews", async () => {
    const w = await protectedWorld({ required_approvals: 1 });
    const d = await engineCreateOk(w.environmentId, [w.stack.id]);
    return { method: "GET", path: reviewsPath(d.id), caller: w.owner };
  });
});
