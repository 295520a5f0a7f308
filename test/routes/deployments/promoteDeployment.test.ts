/**
 * promoteDeployment: POST /v1/deployments/{id}/promote, what succeeded in one environment runs in
 * another of the project without being rebuilt (API_CONTRACT §25), with its event (§8), its audit
 * entry (§14), its configuration (§24), Idempotency-Key (§11) and its plan (`dry_run`). Written
 * from the contract's text; through the real Worker, D1, queue and a local webhook receiver.
 */
import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { encodeCursor } from "../../../src/db/pagination";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import type { EventRecord } from "../../../src/schemas/event";
import type { PromotionPlan } from "../../../src/schemas/promotion-writes";
import { type ApiResponse, internal, request } from "../../helpers/api";
import { type AuditList, rowsOf } from "../../helpers/audit-log";
import { deployIn, GIT, newDeployment, PATCH, reportOk } from "../../helpers/engine";
import { type ErrorBody, expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  type Caller,
  createApiKey,
  createComponent,
  createEnvironment,
  createOwnedProject,
  createProject,
  createStack,
  projectRoleCallers,
  unique,
} from "../../helpers/factories";
import { openApiDocument } from "../../helpers/openapi";
import { runCommonRouteTests } from "../../helpers/security";
import { applied } from "../../helpers/variable-sets";
import { componentPath, environmentPath } from "../../helpers/variables";
import { allowTheLocalReceiver, eventually, hook, integrate, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

type Deployment = DeploymentRecord;
type Answer = Deployment & PromotionPlan & ErrorBody;

const promote = (
  caller: Caller,
  id: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse<Answer>> =>
  request<Answer>("POST", `/v1/deployments/${id}/promote`, { key: caller.key, body, headers });

/** A deployment of `stackIds` carrying `data`, brought to `succeeded` by the engine. */
async function succeeded(
  environmentId: string,
  stackIds: string[],
  data: Record<string, unknown> = { patch: PATCH },
): Promise<Deployment> {
  const created = await newDeployment(environmentId, { stack_ids: stackIds, data });
  expect(created.status, created.raw).toBe(201);
  await reportOk(created.body.id, { status: "in_progress" });
  return reportOk(created.body.id, { status: "succeeded" });
}

/** The deployments of an environment, read straight from D1. */
async function deploymentsIn(environmentId: string): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT id FROM deployments WHERE environment_id = ? ORDER BY id")
    .bind(environmentId)
    .all<{ id: string }>();
  return results.map((r) => r.id);
}

/** The project's `promotion.created` events, read straight from D1. */
async function promotionEvents(projectId: string): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT count(*) AS n FROM events WHERE project_id = ? AND type = 'promotion.created'",
  )
    .bind(projectId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * A project whose default environment (the source) has two stacks, and a second environment (the
 * target) with one stack of each template; an original of both stacks that succeeded.
 */
async function world(data: Record<string, unknown> = { patch: PATCH }) {
  const { org, owner, project } = await createOwnedProject();
  const source = project.default_environment_id;
  const target = (await createEnvironment(project.id, unique("staging"))).id;
  const web = await createStack(source, { template_id: "web" });
  const db = await createStack(source, { template_id: "db" });
  const targetDb = await createStack(target, { template_id: "db" });
  const targetWeb = await createStack(target, { template_id: "web" });
  const original = await succeeded(source, [web.id, db.id], data);
  return { org, owner, project, source, target, web, db, targetWeb, targetDb, original };
}

describe("POST /v1/deployments/{id}/promote", () => {
  it("201: a new queued deployment in the target, stacks mapped by template_id, the original's patch and source, Location", async () => {
    const { owner, project } = await createOwnedProject();
    const source = project.default_environment_id;
    const target = (await createEnvironment(project.id, unique("production"))).id;
    // The original's stack_ids are not in creation order; template_ids are any strings (§17).
    const [s1, s2, s3] = [
      await createStack(source, { template_id: "templates/api v1" }),
      await createStack(source, { template_id: "worker" }),
      await createStack(source, { template_id: "db" }),
    ];
    // The target's stacks are made in another order, with one stack no original stack maps to.
    const t3 = await createStack(target, { template_id: "db" });
    await createStack(target, { template_id: "cache" });
    const t1 = await createStack(target, { template_id: "templates/api v1" });
    const t2 = await createStack(target, { template_id: "worker" });
    const data = { patch: PATCH, source: { git: GIT, registry: { image: "registry.example/web:1" } } };
    const original = await succeeded(source, [s3.id, s1.id, s2.id], data);
    expect(original.promoted_from).toBeNull(); // every record has it: an ID or null
    const before = await request<Deployment>("GET", `/v1/deployments/${original.id}`, { key: owner.key });

    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    const mapped = [t3.id, t1.id, t2.id];
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: target,
      stack_ids: mapped,
      status: "queued",
      data: {
        patch: original.data.patch,
        source: original.data.source,
        stacks: mapped.map((id) => ({ id, status: "queued", timestamp: expect.stringMatching(TS) })),
      },
      started_at: null,
      finished_at: null,
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
      redeploy_of: null,
      promoted_from: original.id,
      gate: null,
      created_by: owner.accountId,
      config: expect.any(Object),
    });
    expect(res.body.data.patch).toEqual(PATCH);
    expect(res.body.data.source).toEqual(data.source);
    expect(res.body.id).not.toBe(original.id);
    expect(res.headers.get("location")).toBe(`/v1/deployments/${res.body.id}`);
    expect(res.headers.get("etag")).toBeTruthy(); // §12: a 201 carries the new record's ETag
    // The record as it reads afterwards is the one answered.
    const read = await request<Deployment>("GET", `/v1/deployments/${res.body.id}`, { key: owner.key });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
    // The original is untouched.
    const after = await request<Deployment>("GET", `/v1/deployments/${original.id}`, { key: owner.key });
    expect(after.body).toEqual(before.body);
    expect(after.headers.get("etag")).toBe(before.headers.get("etag"));
    expect(await deploymentsIn(source)).toEqual([original.id]);
    expect(await deploymentsIn(target)).toEqual([res.body.id]);
  });

  it("an original without a source makes a deployment without one", async () => {
    const { owner, original, target } = await world({ patch: PATCH });
    expect(original.data).not.toHaveProperty("source");
    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.data.patch).toEqual(PATCH);
    expect(res.body.data).not.toHaveProperty("source");
  });

  it("promoting a redeploy, then that promotion: promoted_from is the direct original, redeploy_of null", async () => {
    const { owner, project, original, source, target, web, db } = await world();
    // A redeploy of the original, run to success in the source.
    const redeployed = await request<Deployment>("POST", `/v1/deployments/${original.id}/redeploy`, {
      key: owner.key,
    });
    expect(redeployed.status, redeployed.raw).toBe(201);
    await reportOk(redeployed.body.id, { status: "in_progress" });
    const again = await reportOk(redeployed.body.id, { status: "succeeded" });
    expect(again.redeploy_of).toBe(original.id);
    const first = await promote(owner, again.id, { environment_id: target });
    expect(first.status, first.raw).toBe(201);
    expect(first.body).toMatchObject({ promoted_from: again.id, redeploy_of: null });
    // The promotion succeeds in the target, and goes on to a third environment.
    await reportOk(first.body.id, { status: "in_progress" });
    const promoted = await reportOk(first.body.id, { status: "succeeded" });
    const third = (await createEnvironment(project.id, unique("production"))).id;
    const thirdStacks = [
      await createStack(third, { template_id: "db" }),
      await createStack(third, { template_id: "web" }),
    ];
    const second = await promote(owner, promoted.id, { environment_id: third });
    expect(second.status, second.raw).toBe(201);
    expect(second.body).toMatchObject({
      environment_id: third,
      stack_ids: [thirdStacks[1]?.id, thirdStacks[0]?.id],
      promoted_from: promoted.id,
      redeploy_of: null,
      data: { patch: original.data.patch },
    });
    // Back to the source is a promotion like any other.
    const back = await promote(owner, promoted.id, { environment_id: source });
    expect(back.status, back.raw).toBe(201);
    expect(back.body.stack_ids).toEqual([web.id, db.id]);
    const log = await request<{ data: EventRecord[] }>(
      "GET",
      `/v1/projects/${project.id}/events?type=promotion.created&sort_by=created_at`,
      { key: owner.key },
    );
    expect(log.body.data.map((e) => (e.data as { promoted_from: unknown }).promoted_from)).toEqual([
      { deployment_id: again.id, environment_id: source },
      { deployment_id: promoted.id, environment_id: target },
      { deployment_id: promoted.id, environment_id: target },
    ]);
  });

  it("the engine finds the promotion in GET /internal/v1/deployments?status=queued", async () => {
    const { owner, original, target } = await world();
    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    // Walk the queued list (oldest first) from just before the new deployment, page by page.
    const since = new Date(Date.parse(res.body.created_at) - 1).toISOString();
    let after: string | undefined = encodeCursor("asc", "status=queued", since, "1111111111111111111111");
    const seen: Deployment[] = [];
    for (let pages = 0; after !== undefined && pages < 100; pages++) {
      const page: ApiResponse<{ data: Deployment[]; has_more: boolean; next_page?: string }> = await internal(
        "GET",
        `/deployments?status=queued&limit=240&after=${encodeURIComponent(after)}`,
      );
      expect(page.status, page.raw).toBe(200);
      seen.push(...page.body.data);
      if (seen.some((d) => d.id === res.body.id)) break;
      after = page.body.has_more ? page.body.next_page : undefined;
    }
    expect(seen.find((d) => d.id === res.body.id)).toEqual(res.body);
  });

  it("config is the TARGET environment's versions as they are now, never the source's", async () => {
    const { owner, project } = await createOwnedProject();
    const source = project.default_environment_id;
    const target = (await createEnvironment(project.id, unique("staging"))).id;
    const stack = await createStack(source, { template_id: "app" });
    await createStack(target, { template_id: "app" });
    // The source: its own scope at version 3, a component at version 1.
    const sourceComponent = await createComponent(source, "web");
    for (const name of ["S1", "S2", "S3"])
      await applied(owner, environmentPath(source), {
        variables: { [name]: { type: "string", value: "s" } },
      });
    await applied(owner, componentPath(sourceComponent.id), {
      variables: { SW: { type: "string", value: "s" } },
    });
    // The target: its own scope at version 1 so far, one component at 1 and one never changed (0).
    const c1 = await createComponent(target, "web");
    const c2 = await createComponent(target, "worker");
    await applied(owner, environmentPath(target), { variables: { T1: { type: "string", value: "t" } } });
    await applied(owner, componentPath(c1.id), { variables: { TW: { type: "secret", value: "t" } } });
    const original = await succeeded(source, [stack.id]);
    expect(original.config?.environment_version).toBe(3);
    // A change of the target after the original was made counts: the target as it is now.
    await applied(owner, environmentPath(target), { variables: { T2: { type: "secret", value: "t" } } });

    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.config).toEqual({
      environment_version: 2,
      components: [
        { component_id: c1.id, version: 1 },
        { component_id: c2.id, version: 0 },
      ].sort((a, b) => (a.component_id < b.component_id ? -1 : 1)),
    });
    const config = await request<{
      environment: { id: string; version: number; variables: Array<{ name: string; type: string }> };
      components: Array<{ id: string; name: string; version: number; variables: unknown[] }>;
    }>("GET", `/v1/deployments/${res.body.id}/config`, { key: owner.key });
    expect(config.status, config.raw).toBe(200);
    expect(config.body.environment).toEqual({
      id: target,
      version: 2,
      variables: [
        { name: "T1", type: "string" },
        { name: "T2", type: "secret" },
      ],
    });
    expect(config.body.components.map((c) => c.id).sort()).toEqual([c1.id, c2.id].sort());
  });

  it("created_by is the calling key's account; a contributor may promote", async () => {
    const { org, owner, project, original, target } = await world();
    const { contributor } = await projectRoleCallers({ org, owner, project });
    const res = await promote(contributor, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.created_by).toBe(contributor.accountId);
  });

  describe("environment_id", () => {
    for (const dryRun of [false, true]) {
      const extra = dryRun ? { dry_run: true } : {};
      it(`the deployment's own environment, an unknown one, one of another project: 400 environment_id${dryRun ? " (dry run)" : ""}`, async () => {
        const { owner, original, source, target } = await world();
        const other = await createProject(owner); // same organization, same owner
        const otherEnv = await createEnvironment(other.id);
        await createStack(otherEnv.id, { template_id: "web" });
        await createStack(otherEnv.id, { template_id: "db" });
        const strangers = await createOwnedProject(); // another organization
        for (const environmentId of [
          source,
          UNKNOWN_ID,
          other.default_environment_id,
          otherEnv.id,
          strangers.project.default_environment_id,
        ]) {
          const res = await promote(owner, original.id, { environment_id: environmentId, ...extra });
          expectError(res, 400, "bad_input", "environment_id");
        }
        expect(await deploymentsIn(target)).toEqual([]);
        expect(await deploymentsIn(source)).toEqual([original.id]);
        expect(await deploymentsIn(otherEnv.id)).toEqual([]);
      });
    }

    it("a malformed environment_id, a missing body, a missing or unknown field: 400", async () => {
      const { owner, original, target } = await world();
      for (const bad of ["not-an-id", "", 42, null, { id: target }]) {
        expectError(
          await promote(owner, original.id, { environment_id: bad }),
          400,
          "bad_input",
          "environment_id",
        );
      }
      expectError(await promote(owner, original.id), 400, "bad_input");
      expectError(await promote(owner, original.id, {}), 400, "bad_input", "environment_id");
      expectError(await promote(owner, original.id, { dry_run: true }), 400, "bad_input", "environment_id");
      expectError(
        await promote(owner, original.id, { environment_id: target, stack_ids: [] }),
        400,
        "bad_input",
        "stack_ids",
      );
      expectError(
        await promote(owner, original.id, { environment_id: target, dry_run: "yes" }),
        400,
        "bad_input",
        "dry_run",
      );
      expectError(await promote(owner, original.id, [target]), 400, "bad_input");
      const text = await request<ErrorBody>("POST", `/v1/deployments/${original.id}/promote`, {
        key: owner.key,
        rawBody: JSON.stringify({ environment_id: target }),
        headers: { "content-type": "text/plain" },
      });
      expectError(text, 400, "bad_input");
      expect(await deploymentsIn(target)).toEqual([]);
    });

    it("well-formed UUID and 32-hex IDs that name nothing: 400 environment_id, 404 for the deployment (§2)", async () => {
      const { owner, original, target } = await world();
      const uuid = crypto.randomUUID();
      const hex = uuid.replaceAll("-", "");
      for (const environmentId of [uuid, hex]) {
        expectError(
          await promote(owner, original.id, { environment_id: environmentId }),
          400,
          "bad_input",
          "environment_id",
        );
      }
      for (const id of [uuid, hex])
        expectError(await promote(owner, id, { environment_id: target }), 404, "not_found");
    });

    it("a malformed deployment id is 400, an unknown one 404", async () => {
      const { owner, target } = await world();
      expectError(await promote(owner, "not-an-id", { environment_id: target }), 400, "bad_input");
      expectError(await promote(owner, UNKNOWN_ID, { environment_id: target }), 404, "not_found");
    });
  });

  describe("only a succeeded deployment", () => {
    for (const dryRun of [false, true]) {
      const extra = dryRun ? { dry_run: true } : {};
      it(`queued, in_progress, failed and cancelled originals are 409${dryRun ? " (dry run)" : ""}`, async () => {
        const { owner, source, target, web, db } = await world();
        for (const status of ["queued", "in_progress", "failed", "cancelled"]) {
          const original = await deployIn(source, [web.id, db.id], status);
          expect(original.status).toBe(status);
          const res = await promote(owner, original.id, { environment_id: target, ...extra });
          expectError(res, 409, "conflict");
        }
        expect(await deploymentsIn(target)).toEqual([]);
      });
    }

    it("the environment is checked first: a bad environment_id on a non-succeeded deployment is 400", async () => {
      const { owner, source, web, db } = await world();
      const failed = await deployIn(source, [web.id, db.id], "failed");
      for (const environmentId of [source, UNKNOWN_ID]) {
        expectError(
          await promote(owner, failed.id, { environment_id: environmentId }),
          400,
          "bad_input",
          "environment_id",
        );
      }
    });

    it("the status before the stacks: a non-succeeded deployment whose stacks match nothing is 409 for its status", async () => {
      const { owner, project, source, web, db } = await world();
      const bare = (await createEnvironment(project.id)).id; // no stack at all
      for (const status of ["queued", "failed"]) {
        const original = await deployIn(source, [web.id, db.id], status);
        const res = await promote(owner, original.id, { environment_id: bare });
        const body = expectError(res, 409, "conflict");
        expect((body.cause ?? []).filter((c) => c.path.startsWith("stack_ids"))).toEqual([]);
      }
    });
  });

  describe("stacks matched by template_id", () => {
    for (const dryRun of [false, true]) {
      const extra = dryRun ? { dry_run: true } : {};
      it(`a stack with no match or with two is 409, one cause item stack_ids.<i> per such stack${dryRun ? " (dry run)" : ""}`, async () => {
        const { owner, project } = await createOwnedProject();
        const source = project.default_environment_id;
        const target = (await createEnvironment(project.id)).id;
        const a = await createStack(source, { template_id: "a" });
        const b = await createStack(source, { template_id: "b" });
        const c = await createStack(source, { template_id: "c" });
        const d = await createStack(source, { template_id: "d" });
        const e = await createStack(source, { template_id: "e" });
        // The target: a once, b none, c twice, d once, e none; and a stack nobody maps to.
        await createStack(target, { template_id: "a" });
        await createStack(target, { template_id: "c" });
        await createStack(target, { template_id: "c" });
        await createStack(target, { template_id: "d" });
        await createStack(target, { template_id: "z" });
        const original = await succeeded(source, [a.id, b.id, c.id, d.id, e.id]);
        const res = await promote(owner, original.id, { environment_id: target, ...extra });
        const body = expectError(res, 409, "conflict");
        expect(body.cause?.map((i) => i.path).sort()).toEqual(["stack_ids.1", "stack_ids.2", "stack_ids.4"]);
        for (const item of body.cause ?? []) expect(typeof item.message).toBe("string");
        expect(await deploymentsIn(target)).toEqual([]);

        // Indexes are the original's stack_ids order, not creation order.
        const reordered = await succeeded(source, [e.id, a.id, c.id, d.id]);
        const again = expectError(
          await promote(owner, reordered.id, { environment_id: target, ...extra }),
          409,
          "conflict",
        );
        expect(again.cause?.map((i) => i.path).sort()).toEqual(["stack_ids.0", "stack_ids.2"]);
      });
    }

    it("a single stack with two matches, and a target with no stacks at all", async () => {
      const { owner, project, original, target, source } = await world();
      await createStack(target, { template_id: "web" }); // web now twice in the target
      const twice = expectError(
        await promote(owner, original.id, { environment_id: target }),
        409,
        "conflict",
      );
      expect(twice.cause?.map((i) => i.path)).toEqual(["stack_ids.0"]);
      const bare = (await createEnvironment(project.id)).id;
      const none = expectError(await promote(owner, original.id, { environment_id: bare }), 409, "conflict");
      expect(none.cause?.map((i) => i.path).sort()).toEqual(["stack_ids.0", "stack_ids.1"]);
      expect(await deploymentsIn(source)).toEqual([original.id]);
    });

    it("two stacks of the original with one template map to the target's one stack: deployed once (201), both in the plan", async () => {
      const { owner, source, target, targetWeb } = await world();
      const web1 = await createStack(source, { template_id: "edge" });
      const web2 = await createStack(source, { template_id: "edge" });
      const targetEdge = await createStack(target, { template_id: "edge" });
      const original = await succeeded(source, [web1.id, web2.id]);
      const plan = await promote(owner, original.id, { environment_id: target, dry_run: true });
      expect(plan.status, plan.raw).toBe(200);
      expect(plan.body.stacks).toEqual([
        { from: web1.id, to: targetEdge.id },
        { from: web2.id, to: targetEdge.id },
      ]);
      const res = await promote(owner, original.id, { environment_id: target });
      expect(res.status, res.raw).toBe(201);
      expect(res.body.stack_ids).toEqual([targetEdge.id]);
      expect(res.body.status).toBe("queued");
      const read = await request<Deployment>("GET", `/v1/deployments/${res.body.id}`, { key: owner.key });
      expect(read.body.stack_ids).toEqual([targetEdge.id]);
      expect(read.body.stack_ids).not.toContain(targetWeb.id);
    });

    it("a stack of the target that no stack of the original maps to is fine", async () => {
      const { owner, original, target, targetWeb, targetDb } = await world();
      await createStack(target, { template_id: "queue" });
      await createStack(target, { template_id: "cron" });
      const res = await promote(owner, original.id, { environment_id: target });
      expect(res.status, res.raw).toBe(201);
      expect(res.body.stack_ids).toEqual([targetWeb.id, targetDb.id]);
    });
  });

  it("contributors promote; viewers 403 forbidden; outsiders 404; a key needs deployments:write and the project", async () => {
    const { org, owner, project, original, target } = await world();
    const { viewer, contributor, outsider } = await projectRoleCallers({ org, owner, project });
    const body = { environment_id: target };
    expectError(await promote(viewer, original.id, body), 403, "forbidden");
    expectError(await promote(viewer, original.id, { ...body, dry_run: true }), 403, "forbidden");
    expectError(await promote(outsider, original.id, body), 404, "not_found");
    expectError(await promote(outsider, original.id, { ...body, dry_run: true }), 404, "not_found");
    const reader = await createApiKey(owner, { scopes: ["deployments:read"] });
    const refused = await promote(reader, original.id, body);
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("deployments:write");
    const elsewhere = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [elsewhere.id] });
    expectError(await promote(restricted, original.id, body), 404, "not_found");
    expect(await deploymentsIn(target)).toEqual([]);

    const writer = await createApiKey(owner, { scopes: ["deployments:write"], project_ids: [project.id] });
    const byWriter = await promote(writer, original.id, body);
    expect(byWriter.status, byWriter.raw).toBe(201);
    const byContributor = await promote(contributor, original.id, body);
    expect(byContributor.status, byContributor.raw).toBe(201);
    expect(byContributor.body.created_by).toBe(contributor.accountId);
    expect(await deploymentsIn(target)).toEqual([byWriter.body.id, byContributor.body.id].sort());
    const operation = (await openApiDocument()).paths["/v1/deployments/{id}/promote"]?.post as
      | Record<string, unknown>
      | undefined;
    expect(operation?.operationId).toBe("promoteDeployment");
    expect(operation?.["x-required-scope"]).toBe("deployments:write");
  });

  it("emits promotion.created: in the event log with the new record and where it came from", async () => {
    const { owner, project, original, source, target } = await world();
    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    const log = await request<{ data: EventRecord[]; has_more: boolean }>(
      "GET",
      `/v1/projects/${project.id}/events?type=promotion.created`,
      { key: owner.key },
    );
    expect(log.status, log.raw).toBe(200);
    expect(log.body.data).toHaveLength(1);
    const [event] = log.body.data;
    expect(event).toEqual({
      id: expect.stringMatching(NEW_ID),
      type: "promotion.created",
      project_id: project.id,
      data: {
        project_id: project.id,
        deployment: res.body,
        promoted_from: { deployment_id: original.id, environment_id: source },
      },
      created_at: expect.stringMatching(TS),
    });
  });

  it("delivers promotion.created, signed, to a webhook integration with `promotions` on and not to one with it off", async () => {
    const { owner, project, original, source, target } = await world();
    const [on, off] = [unique("promotions-on"), unique("promotions-off")];
    const withFlag = await integrate(project.id, hook(on), { promotions: true });
    await integrate(project.id, hook(off), { promotions: false, changelog: true });
    const res = await promote(owner, original.id, { environment_id: target });
    expect(res.status, res.raw).toBe(201);
    const log = await request<{ data: EventRecord[] }>(
      "GET",
      `/v1/projects/${project.id}/events?type=promotion.created`,
      { key: owner.key },
    );
    const eventId = log.body.data[0]?.id;
    expect(eventId).toMatch(NEW_ID);

    await eventually(async () => {
      const requests = await received(on);
      expect(requests).toHaveLength(1);
      const [delivery] = requests;
      expect(delivery?.headers["webhook-id"]).toBe(eventId);
      const payload = new Webhook(withFlag.signing_secret).verify(
        delivery?.body ?? "",
        delivery?.headers ?? {},
      );
      expect(payload).toEqual({
        type: "promotion.created",
        timestamp: expect.any(String),
        data: {
          project_id: project.id,
          deployment: res.body,
          promoted_from: { deployment_id: original.id, environment_id: source },
        },
      });
    });
    const deliveries = await request<{ data: Array<{ integration_id: string }> }>(
      "GET",
      `/v1/events/${eventId}/deliveries`,
      { key: owner.key },
    );
    expect(deliveries.status, deliveries.raw).toBe(200);
    expect(deliveries.body.data.map((d) => d.integration_id)).toEqual([withFlag.id]);
    expect(await received(off)).toEqual([]);
  });

  it("writes one audit entry promoteDeployment, target the new deployment", async () => {
    const { owner, project, original, target } = await world();
    const requestId = `promote-${crypto.randomUUID()}`;
    const res = await promote(owner, original.id, { environment_id: target }, { "x-request-id": requestId });
    expect(res.status, res.raw).toBe(201);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "promoteDeployment",
      target_type: "deployment",
      target_id: res.body.id,
      project_id: project.id,
    });
    const audit = await request<AuditList>(
      "GET",
      `/v1/projects/${project.id}/audit-log?action=promoteDeployment`,
      { key: owner.key },
    );
    expect(audit.status, audit.raw).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      action: "promoteDeployment",
      target: { type: "deployment", id: res.body.id },
      request_id: requestId,
      actor: { type: "api_key", account_id: owner.accountId, api_key_id: owner.keyId },
    });
  });

  it("Idempotency-Key: a replay answers the same 201 and makes one deployment", async () => {
    const { owner, original, target } = await world();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await promote(owner, original.id, { environment_id: target }, headers);
    expect(first.status, first.raw).toBe(201);
    const replay = await promote(owner, original.id, { environment_id: target }, headers);
    expect([replay.status, replay.raw, replay.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
    expect(replay.headers.get("location")).toBe(first.headers.get("location"));
    expect(await deploymentsIn(target)).toEqual([first.body.id]);
    // The same key with another body executes nothing.
    const other = await promote(owner, original.id, { environment_id: target, dry_run: true }, headers);
    expectError(other, 400, "bad_input", "header.idempotency-key");
    expect(await deploymentsIn(target)).toEqual([first.body.id]);
  });

  runCommonRouteTests("POST /v1/deployments/{id}/promote", async () => {
    const w = await world();
    return {
      method: "POST",
      path: `/v1/deployments/${w.original.id}/promote`,
      body: { environment_id: w.target },
      caller: w.owner,
    };
  });
});

describe("POST /v1/deployments/{id}/promote with dry_run", () => {
  /** Each side's names per scope key, values that must never appear in an answer. */
  const values: string[] = [];
  const v = () => {
    const value = `value-${crypto.randomUUID()}`;
    values.push(value);
    return value;
  };
  const str = () => ({ type: "string", value: v() });

  /** Sorted, comparable plan variables. */
  const normalized = (plan: PromotionPlan["variables"]) =>
    plan
      .map((s) => ({ ...s, missing: [...s.missing].sort(), extra: [...s.extra].sort() }))
      .sort((x, y) => JSON.stringify(x.scope).localeCompare(JSON.stringify(y.scope)));

  async function planWorld() {
    const { owner, project } = await createOwnedProject();
    const source = project.default_environment_id;
    const target = (await createEnvironment(project.id, unique("production"))).id;
    const [s1, s2] = [
      await createStack(source, { template_id: "api" }),
      await createStack(source, { template_id: "jobs" }),
    ];
    const t2 = await createStack(target, { template_id: "jobs" });
    const t1 = await createStack(target, { template_id: "api" });
    await createStack(target, { template_id: "unmapped" });

    // Source: environment A B C; web W1 W2; worker K1 (a string); onlysrc Z; emptysrc nothing.
    const [web, worker, onlysrc] = [
      await createComponent(source, "web"),
      await createComponent(source, "worker"),
      await createComponent(source, "onlysrc"),
    ];
    await createComponent(source, "emptysrc");
    await applied(owner, environmentPath(source), { variables: { A: str(), B: str(), C: str() } });
    await applied(owner, componentPath(web.id), { variables: { W1: str(), W2: str() } });
    await applied(owner, componentPath(worker.id), { variables: { K1: str() } });
    await applied(owner, componentPath(onlysrc.id), { variables: { Z: str() } });
    // Target: environment B (another type and value) C D; web W1; worker K1 (a secret, another
    // value); onlytgt Y.
    const [tWeb, tWorker, tOnly] = [
      await createComponent(target, "web"),
      await createComponent(target, "worker"),
      await createComponent(target, "onlytgt"),
    ];
    await applied(owner, environmentPath(target), {
      variables: { B: { type: "secret", value: v() }, C: str(), D: str() },
    });
    await applied(owner, componentPath(tWeb.id), { variables: { W1: str() } });
    await applied(owner, componentPath(tWorker.id), { variables: { K1: { type: "secret", value: v() } } });
    await applied(owner, componentPath(tOnly.id), { variables: { Y: str() } });

    const original = await succeeded(source, [s2.id, s1.id]);
    // Changes of the source after the original was made (a component added included): not in its
    // pinned configuration.
    await applied(owner, environmentPath(source), { variables: { A: null, E: str() } });
    await applied(owner, componentPath(web.id), { variables: { W2: null } });
    const late = await createComponent(source, "late");
    await applied(owner, componentPath(late.id), { variables: { L: str() } });
    return {
      owner,
      project,
      source,
      target,
      original,
      stacks: [
        { from: s2.id, to: t2.id },
        { from: s1.id, to: t1.id },
      ],
    };
  }

  it("200 the plan: stacks from → to, names missing and extra per scope from the original's pinned configuration, no values", async () => {
    const { owner, target, original, stacks } = await planWorld();
    const res = await promote(owner, original.id, { environment_id: target, dry_run: true });
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["dry_run", "environment_id", "stacks", "variables"]);
    expect(res.body.dry_run).toBe(true);
    expect(res.body.environment_id).toBe(target);
    expect(res.body.stacks).toEqual(stacks);
    expect(normalized(res.body.variables)).toEqual(
      normalized([
        { scope: { type: "environment" }, missing: ["A"], extra: ["D"] },
        { scope: { type: "component", name: "web" }, missing: ["W2"], extra: [] },
        { scope: { type: "component", name: "onlysrc" }, missing: ["Z"], extra: [] },
        { scope: { type: "component", name: "onlytgt" }, missing: [], extra: ["Y"] },
      ]),
    );
    for (const value of values) expect(res.raw).not.toContain(value);
  });

  it("an original whose config is null compares the source environment's current variables", async () => {
    const { owner, target, original, stacks } = await planWorld();
    await env.DB.prepare("UPDATE deployments SET config = NULL WHERE id = ?").bind(original.id).run();
    const res = await promote(owner, original.id, { environment_id: target, dry_run: true });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.stacks).toEqual(stacks);
    // The source now: environment B C E; web W1; worker K1; onlysrc Z; late L.
    expect(normalized(res.body.variables)).toEqual(
      normalized([
        { scope: { type: "environment" }, missing: ["E"], extra: ["D"] },
        { scope: { type: "component", name: "late" }, missing: ["L"], extra: [] },
        { scope: { type: "component", name: "onlysrc" }, missing: ["Z"], extra: [] },
        { scope: { type: "component", name: "onlytgt" }, missing: [], extra: ["Y"] },
      ]),
    );
    for (const value of values) expect(res.raw).not.toContain(value);
  });

  it("identical names in every scope: variables is empty", async () => {
    const { owner, original, target } = await world();
    const res = await promote(owner, original.id, { environment_id: target, dry_run: true });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.variables).toEqual([]);
  });

  it("creates nothing: no deployment, no event, no audit entry; dry_run false promotes", async () => {
    const { owner, project, original, source, target, targetWeb, targetDb, web, db } = await world();
    const requestId = `promote-dry-${crypto.randomUUID()}`;
    const res = await promote(
      owner,
      original.id,
      { environment_id: target, dry_run: true },
      { "x-request-id": requestId },
    );
    expect(res.status, res.raw).toBe(200);
    expect(res.body.stacks).toEqual([
      { from: web.id, to: targetWeb.id },
      { from: db.id, to: targetDb.id },
    ]);
    expect(await deploymentsIn(target)).toEqual([]);
    expect(await deploymentsIn(source)).toEqual([original.id]);
    expect(await promotionEvents(project.id)).toBe(0);
    expect(await rowsOf(requestId)).toEqual([]);

    const real = await promote(owner, original.id, { environment_id: target, dry_run: false });
    expect(real.status, real.raw).toBe(201);
    expect(await deploymentsIn(target)).toEqual([real.body.id]);
    expect(await promotionEvents(project.id)).toBe(1);
  });
});
