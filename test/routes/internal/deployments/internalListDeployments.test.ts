/**
 * internalListDeployments: GET /internal/v1/deployments, the deployments of every project, oldest
 * first, so the engine finds work it did not create (API_CONTRACT §20).
 */
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../../../src/db/pagination";
import type { DeploymentRecord } from "../../../../src/schemas/deployment";
import { type ApiResponse, internal, request } from "../../../helpers/api";
import { deployIn } from "../../../helpers/engine";
import { type ErrorBody, expectError } from "../../../helpers/expect";
import { createDeployment, createProjectWithStack } from "../../../helpers/factories";
import { byCreated } from "../../../helpers/pages";
import { runInternalRouteTests } from "../../../helpers/security";

type Page = { data: DeploymentRecord[]; has_more: boolean; next_page?: string };

const list = (query: string) => internal<Page & ErrorBody>("GET", `/deployments${query}`);

/**
 * Every item of the list from just before `since` (a cursor made as the service makes it, so the
 * walk skips what other tests left), page by page, under `query`'s filter (`filterKey`).
 */
async function walkFrom(
  since: string,
  filterKey: string,
  query: string,
  limit = 2,
): Promise<DeploymentRecord[]> {
  const before = new Date(Date.parse(since) - 1).toISOString();
  let after: string | undefined = encodeCursor("asc", filterKey, before, "1111111111111111111111");
  const items: DeploymentRecord[] = [];
  for (let pages = 0; after !== undefined && pages < 200; pages++) {
    const res: ApiResponse<Page & ErrorBody> = await list(
      `?limit=${limit}${query}&after=${encodeURIComponent(after)}`,
    );
    expect(res.status, res.raw).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(limit);
    items.push(...res.body.data);
    after = res.body.has_more ? res.body.next_page : undefined;
  }
  return items;
}

/** Two organizations' projects, each with deployments in every status. */
async function twoTenants() {
  const a = await createProjectWithStack();
  const b = await createProjectWithStack();
  const first = await createDeployment(a.environmentId, [a.stack.id]);
  const made: DeploymentRecord[] = [first];
  for (const s of [b, a]) {
    for (const status of ["queued", "in_progress", "succeeded", "failed", "cancelled"]) {
      made.push(await deployIn(s.environmentId, [s.stack.id], status));
    }
  }
  made.push(await createDeployment(b.environmentId, [b.stack.id]));
  return { a, b, first, made };
}

describe("GET /internal/v1/deployments", () => {
  it("?status=queued: the queued deployments of every project, oldest first, page by page", async () => {
    const { first, made } = await twoTenants();
    const mine = new Set(made.map((d) => d.id));
    const walked = await walkFrom(first.created_at, "status=queued", "&status=queued");
    expect(walked.every((d) => d.status === "queued")).toBe(true);
    expect(walked).toEqual([...walked].sort(byCreated));
    const queued = made.filter((d) => d.status === "queued").sort(byCreated);
    expect(walked.filter((d) => mine.has(d.id)).map((d) => d.id)).toEqual(queued.map((d) => d.id));
    expect(queued).toHaveLength(4);
  });

  it("the first page starts with the oldest; without a filter every status, in either order", async () => {
    const { first, made } = await twoTenants();
    const oldest = await list("?status=queued&limit=3");
    expect(oldest.body.data).toEqual([...oldest.body.data].sort(byCreated));
    expect(oldest.body.data.every((d) => d.status === "queued")).toBe(true);
    const mine = new Set(made.map((d) => d.id));
    const all = await walkFrom(first.created_at, "", "", 5);
    expect(all.filter((d) => mine.has(d.id)).map((d) => d.id)).toEqual(
      [...made].sort(byCreated).map((d) => d.id),
    );
    const newest = await list("?sort_by=-created_at&limit=240");
    expect(newest.body.data).toEqual([...newest.body.data].sort(byCreated).reverse());
  });

  it("takes the status filter as the public lists do: repeated or comma-separated, one set", async () => {
    const { first, made } = await twoTenants();
    const mine = new Set(made.map((d) => d.id));
    const repeated = await walkFrom(
      first.created_at,
      "status=failed,succeeded",
      "&status=failed&status=succeeded",
    );
    const commas = await walkFrom(first.created_at, "status=failed,succeeded", "&status=succeeded,failed", 3);
    const ids = (items: DeploymentRecord[]) => items.filter((d) => mine.has(d.id)).map((d) => d.id);
    expect(ids(repeated)).toEqual(ids(commas));
    expect(ids(repeated)).toEqual(
      made
        .filter((d) => d.status === "failed" || d.status === "succeeded")
        .sort(byCreated)
        .map((d) => d.id),
    );
  });

  it("a redeploy is work the engine finds", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const failed = await deployIn(environmentId, [stack.id], "failed");
    const res = await request<DeploymentRecord>("POST", `/v1/deployments/${failed.id}/redeploy`, {
      key: owner.key,
    });
    const walked = await walkFrom(res.body.created_at, "status=queued", "&status=queued");
    expect(walked.find((d) => d.id === res.body.id)).toEqual(res.body);
  });

  it("refuses a bad status, limit or cursor, and a cursor of another filter or order", async () => {
    expectError(await list("?status=paused"), 400, "bad_input", "status.0");
    expectError(await list("?limit=0"), 400, "bad_input", "limit");
    expectError(await list("?limit=241"), 400, "bad_input", "limit");
    expectError(await list("?after=%%%"), 400, "bad_input");
    const page = await list("?status=queued&limit=1");
    expect(page.body.has_more).toBe(true);
    const cursor = encodeURIComponent(page.body.next_page ?? "");
    expectError(await list(`?status=failed&after=${cursor}`), 400, "bad_input", "after");
    expectError(await list(`?status=queued&sort_by=-created_at&after=${cursor}`), 400, "bad_input", "after");
    expect((await list(`?status=queued&sort_by=%2Bcreated_at&after=${cursor}`)).status).toBe(200);
  });

  runInternalRouteTests("GET /internal/v1/deployments", async () => ({
    method: "GET",
    path: "/internal/v1/deployments?status=queued",
  }));
});
