/**
 * createDeployment: POST /v1/environments/{environment_id}/deployments (API_CONTRACT §23:
 * contributor, `deployments:write`; `201` deployment with `Location`, `queued`; the internal
 * create's body and rules (§9); `stack_ids` left out means every stack of the environment in
 * creation order, `409` when it has none; audit `createDeployment`; found by the engine through
 * §20's queued list), with §24's `created_by`, §11's Idempotency-Key and §12's ETag.
 */
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../../src/db/pagination";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { type ApiResponse, internal, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { GIT, PATCH } from "../../helpers/engine";
import {
  environmentPath,
  expectMissingScope,
  expectPublished,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  pause,
  readEnvironment,
  rowsIn,
  STRONG_ETAG,
} from "../../helpers/environments";
import { type ErrorBody, expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  type Caller,
  createCaller,
  createEnvironment,
  createOwnedProject,
  createProjectWithStack,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;

const deploymentsPath = (environmentId: string) => `${environmentPath(environmentId)}/deployments`;

const start = (
  caller: Caller | string,
  environmentId: string,
  body: unknown,
  headers: Record<string, string> = {},
) =>
  request<Deployment & ErrorBody>("POST", deploymentsPath(environmentId), {
    key: typeof caller === "string" ? caller : caller.key,
    body,
    headers,
  });

const BODY = { data: { patch: PATCH } };

/** The engine's queued list (§20) from just before `since`, every page. */
async function queuedSince(since: string): Promise<Deployment[]> {
  const before = new Date(Date.parse(since) - 1).toISOString();
  let after: string | undefined = encodeCursor("asc", "status=queued", before, "1111111111111111111111");
  const items: Deployment[] = [];
  for (let pages = 0; after !== undefined && pages < 500; pages++) {
    const res: ApiResponse<{ data: Deployment[]; has_more: boolean; next_page?: string }> = await internal(
      "GET",
      `/deployments?status=queued&limit=240&after=${encodeURIComponent(after)}`,
    );
    expect(res.status, res.raw).toBe(200);
    items.push(...res.body.data);
    after = res.body.has_more ? res.body.next_page : undefined;
  }
  return items;
}

describe("POST /v1/environments/{environment_id}/deployments", () => {
  it("201: a queued deployment of the given stacks, every stack queued, Location and a strong ETag; a read agrees", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const source = { git: GIT, registry: { image: "registry.example/web:7", command: ["serve"] } };
    const res = await start(owner, environmentId, {
      stack_ids: [second.id, stack.id],
      data: { patch: PATCH, source },
    });
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(NEW_ID),
      environment_id: environmentId,
      stack_ids: [second.id, stack.id],
      status: "queued",
      data: {
        patch: PATCH,
        source,
        stacks: [second.id, stack.id].map((id) => ({
          id,
          status: "queued",
          timestamp: expect.stringMatching(TS),
        })),
      },
      started_at: null,
      finished_at: null,
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
      redeploy_of: null,
      created_by: owner.accountId,
    });
    expect(res.body.data.stacks).toHaveLength(2);
    // Location names the new record: a read of it answers the record.
    const location = res.headers.get("location") ?? "";
    expect([`/v1/deployments/${res.body.id}`, `${deploymentsPath(environmentId)}/${res.body.id}`]).toContain(
      location,
    );
    expect((await request("GET", location, { key: owner.key })).body).toEqual(res.body);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(STRONG_ETAG);
    const read = await request<Deployment>("GET", `/v1/deployments/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(etag);
  });

  it("a deployment without a source has none in data", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const res = await start(owner, environmentId, { stack_ids: [stack.id], data: { patch: PATCH } });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.data).not.toHaveProperty("source");
  });

  describe("stack_ids", () => {
    it("left out: every stack of the environment, in creation order, and only its own", async () => {
      const { owner, project } = await createOwnedProject();
      const environmentId = project.default_environment_id;
      const made: string[] = [];
      for (let i = 0; i < 4; i++) {
        made.push((await createStack(environmentId, { name: `stack-${i}` })).id);
        await pause();
      }
      const other = await createEnvironment(project.id);
      await createStack(other.id);
      const res = await start(owner, environmentId, BODY);
      expect(res.status, res.raw).toBe(201);
      expect(res.body.stack_ids).toEqual(made);
      expect(res.body.data.stacks?.map((s) => s.id)).toEqual(made);
    });

    it("left out in an environment without stacks: 409 conflict, nothing created", async () => {
      const { owner, project } = await createOwnedProject();
      const empty = await createEnvironment(project.id);
      expectError(await start(owner, empty.id, BODY), 409, "conflict");
      expect(await rowsIn("deployments", empty.id)).toBe(0);
    });

    it("every stack must be the environment's: 400 naming each other one as stack_ids.<i>, nothing created", async () => {
      const { owner, project, environmentId, stack } = await createProjectWithStack();
      const other = await createEnvironment(project.id);
      const foreign = await createStack(other.id);
      const stranger = await createProjectWithStack();
      const cases: Array<[string[], string[]]> = [
        [[stack.id, foreign.id], ["stack_ids.1"]],
        [[UNKNOWN_ID, stack.id], ["stack_ids.0"]],
        [
          [foreign.id, stack.id, stranger.stack.id],
          ["stack_ids.0", "stack_ids.2"],
        ],
      ];
      for (const [stackIds, paths] of cases) {
        const res = await start(owner, environmentId, { stack_ids: stackIds, data: { patch: PATCH } });
        expectError(res, 400, "bad_input");
        expect(res.body.cause?.map((c) => c.path).sort()).toEqual(paths);
      }
      // Another project's stack is not the environment's either, even for its own owner.
      const theirs = await start(stranger.owner, stranger.environmentId, {
        stack_ids: [stack.id],
        data: { patch: PATCH },
      });
      expectError(theirs, 400, "bad_input", "stack_ids.0");
      expect(await rowsIn("deployments", environmentId)).toBe(0);
      expect(await rowsIn("deployments", stranger.environmentId)).toBe(0);
    });

    it("a malformed stack ID is 400 naming its index", async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      expectError(
        await start(owner, environmentId, { stack_ids: [stack.id, "not an id"], data: { patch: PATCH } }),
        400,
        "bad_input",
        "stack_ids.1",
      );
      expect(await rowsIn("deployments", environmentId)).toBe(0);
    });
  });

  it.each([
    [undefined, ""],
    [{}, "data"],
    [{ data: {} }, "data.patch"],
    [{ data: { patch: "replace" } }, "data.patch"],
    [{ data: { patch: [{ op: "upsert", path: "/a" }] } }, "data.patch.0.op"],
    [{ data: { patch: [{ op: "add" }] } }, "data.patch.0.path"],
    [{ data: { patch: [], stacks: [] } }, "data.stacks"],
    [{ data: { patch: [], extra: 1 } }, "data.extra"],
    [{ data: { patch: [] }, status: "succeeded" }, "status"],
    [{ data: { patch: [] }, environment_id: UNKNOWN_ID }, "environment_id"],
    [{ data: { patch: [], source: { git: { ...GIT, provider: "svn" } } } }, "data.source.git.provider"],
    [{ data: { patch: [] }, stack_ids: "all" }, "stack_ids"],
  ])("refuses the body %j with 400 (cause %s); nothing is created", async (body, path) => {
    const { owner, environmentId } = await createProjectWithStack();
    const res = await start(owner, environmentId, body);
    expectError(res, 400, "bad_input", path === "" ? undefined : path);
    expect(await rowsIn("deployments", environmentId)).toBe(0);
  });

  it("created_by is the calling key's account (not who issued the key); the engine's creates have null", async () => {
    const w = await createProjectWithStack();
    const { contributor } = await projectRoleCallers(w);
    const byContributor = await start(contributor, w.environmentId, BODY);
    expect(byContributor.status, byContributor.raw).toBe(201);
    expect(byContributor.body.created_by).toBe(contributor.accountId);
    expect(byContributor.body.created_by).not.toBe(w.owner.accountId);
    const byEngine = await internal<Deployment>("POST", `/environments/${w.environmentId}/deployments`, {
      stack_ids: [w.stack.id],
      data: { patch: PATCH },
    });
    expect(byEngine.status, byEngine.raw).toBe(201);
    expect(byEngine.body.created_by).toBeNull();
  });

  it("the engine finds it in its queued list (§20) like any other", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const res = await start(owner, environmentId, { stack_ids: [stack.id], data: { patch: PATCH } });
    const queued = await queuedSince(res.body.created_at);
    expect(queued.find((d) => d.id === res.body.id)).toEqual(res.body);
  });

  it("does not change current_deployment_id until it succeeds", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    const res = await start(owner, environmentId, BODY);
    expect((await readEnvironment(owner, environmentId)).current_deployment_id).toBeNull();
    await internal("PATCH", `/deployments/${res.body.id}`, { status: "in_progress" });
    await internal("PATCH", `/deployments/${res.body.id}`, { status: "succeeded" });
    expect((await readEnvironment(owner, environmentId)).current_deployment_id).toBe(res.body.id);
  });

  it("writes one audit entry, createDeployment, about the new deployment", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    const requestId = `start-${crypto.randomUUID()}`;
    const res = await start(owner, environmentId, BODY, { "x-request-id": requestId });
    expect(res.status).toBe(201);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "createDeployment",
      target_type: "deployment",
      target_id: res.body.id,
      project_id: project.id,
      org_id: owner.orgId,
      actor_type: "api_key",
      actor_account_id: owner.accountId,
      actor_api_key_id: owner.keyId,
    });
    // §14: every non-secret top-level field, the ones only the INSERT decides (status, §24's
    // config) as the record has them; never `data` (a patch may carry values); no gate (none holds).
    const changes = JSON.parse(String(rows[0]?.changes));
    expect(changes).toMatchObject({
      status: { from: null, to: "queued" },
      config: { from: null, to: res.body.config },
      created_by: { from: null, to: owner.accountId },
      stack_ids: { from: null, to: res.body.stack_ids },
    });
    expect(res.body.config).toMatchObject({ environment_version: 0 });
    expect(Object.keys(changes)).not.toContain("data");
    expect(Object.keys(changes)).not.toContain("gate");
    // A refused create writes none.
    const refusedId = `start-${crypto.randomUUID()}`;
    await start(owner, environmentId, { data: {} }, { "x-request-id": refusedId });
    expect(await rowsOf(refusedId)).toEqual([]);
  });

  it("an Idempotency-Key makes a retried create one deployment, sequential or concurrent", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await start(owner, environmentId, BODY, headers);
    const retry = await start(owner, environmentId, BODY, headers);
    expect(first.status).toBe(201);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));
    expect(await rowsIn("deployments", environmentId)).toBe(1);

    const concurrent = { "idempotency-key": crypto.randomUUID() };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => start(owner, environmentId, BODY, concurrent)),
    );
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(new Set(results.filter((r) => r.status === 201).map((r) => r.body.id)).size).toBe(1);
    expect(await rowsIn("deployments", environmentId)).toBe(2);
    expectError(
      await start(owner, environmentId, { data: { patch: [] } }, headers),
      400,
      "bad_input",
      "header.idempotency-key",
    );
  });

  it("contributors, owners and org admins start one; viewers are 403 forbidden; non-members 404", async () => {
    const w = await createProjectWithStack();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    expectError(await start(viewer, w.environmentId, BODY), 403, "forbidden");
    expectError(await start(outsider, w.environmentId, BODY), 404, "not_found");
    expect(await rowsIn("deployments", w.environmentId)).toBe(0);
    for (const caller of [contributor, w.owner, admin]) {
      const res = await start(caller, w.environmentId, BODY);
      expect(res.status, res.raw).toBe(201);
      expect(res.body.created_by).toBe(caller.accountId);
    }
  });

  it("publishes x-required-scope deployments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "post",
      "/v1/environments/{environment_id}/deployments",
      "createDeployment",
      "deployments:write",
    );
    const { owner, environmentId } = await createProjectWithStack();
    expectMissingScope(
      await start(await keyWithout(owner, "deployments:write"), environmentId, BODY),
      "deployments:write",
    );
    expectMissingScope(
      await start(await keyWith(owner, "environments:write"), environmentId, BODY),
      "deployments:write",
    );
    expectError(await start(await keyForAnotherProject(owner), environmentId, BODY), 404, "not_found");
    expect(await rowsIn("deployments", environmentId)).toBe(0);
    const res = await start(await keyWith(owner, "deployments:write"), environmentId, BODY);
    expect(res.status, res.raw).toBe(201);
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await start(owner, UNKNOWN_ID, BODY), 404, "not_found");
    expectError(await start(owner, "nope!", BODY), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("POST /v1/environments/{environment_id}/deployments", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    return { method: "POST", path: deploymentsPath(environmentId), body: BODY, caller: owner };
  });
});
