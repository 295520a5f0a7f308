/**
 * The work of part four's requests (API_CONTRACT §23–§26), counted on the real bindings
 * (test/helpers/work-counts.ts): an environment read, a deployment started from the API, a
 * promotion, and the engine's queued list under a lock and `serial`.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { reportOk } from "../../helpers/engine";
import {
  type Caller,
  createDeployment,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  createStack,
} from "../../helpers/factories";
import { freshKey, measure } from "../../helpers/work-counts";

describe("work per request of part four (API_CONTRACT §23–§26)", () => {
  const warmKey = async (owner: Caller) => {
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    return key;
  };
  const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) });
  const write = { status: 201, limiterCalls: 2, sessions: ["first-primary"] };

  it("an environment read: two statements in one round trip (its lookup, and what current_deployment_id and config_pending need)", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await warmKey(owner);
    expect(await measure(`/v1/environments/${project.default_environment_id}`, key)).toEqual({
      status: 200,
      d1Statements: 2,
      d1RoundTrips: 1,
      limiterCalls: 1,
      sessions: ["first-unconstrained"],
    });
    // A list's page is the project's lookup and the page in one round trip, whatever its depth.
    for (let i = 0; i < 3; i++) await createEnvironment(project.id);
    expect(await measure(`/v1/projects/${project.id}/environments?limit=2`, key)).toMatchObject({
      status: 200,
      d1Statements: 2,
      d1RoundTrips: 1,
    });
  });

  it("a deployment started from the API: its read (the environment's lookup and the stacks) and one batch, as the engine's; a protected environment's gate adds no statement", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const key = await warmKey(owner);
    const cost = { ...write, d1RoundTrips: 2 };
    const free = await measure(
      `/v1/environments/${environmentId}/deployments`,
      key,
      post({ data: { patch: [] } }),
    );
    expect(free).toMatchObject(cost);
    const engine = await measure(`/internal/v1/environments/${environmentId}/deployments`, undefined, {
      ...post({ stack_ids: [stack.id], data: { patch: [] } }),
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expect(engine.d1RoundTrips).toBe(2);
    // The same create where the protection requires an approval: `waiting`, at the same cost.
    await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: {
        required_approvals: 1,
        reviewer_role: "owner",
        prevent_self_review: false,
        wait_timer: 0,
        concurrency: "parallel",
      },
    });
    const gated = await measure(
      `/v1/environments/${environmentId}/deployments`,
      key,
      post({ data: { patch: [] } }),
    );
    // The same statements; its `deployment.waiting` (§31, written by the batch either way, kept only
    // when the INSERT made it waiting) is published once it commits.
    expect(gated).toEqual({ ...free, queueMessages: 1 });
  });

  it("a promotion: one round trip of reads, then one batch (the deployment, its event, its audit entry)", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const target = await createEnvironment(project.id);
    await createStack(target.id, { template_id: stack.template_id });
    const original = await createDeployment(environmentId, [stack.id]);
    await reportOk(original.id, { status: "in_progress" });
    await reportOk(original.id, { status: "succeeded" });
    const key = await warmKey(owner);
    const promoted = await measure(
      `/v1/deployments/${original.id}/promote`,
      key,
      post({ environment_id: target.id }),
    );
    expect(promoted).toMatchObject({ ...write, d1RoundTrips: 2, queueMessages: 1 });
    const plan = await measure(
      `/v1/deployments/${original.id}/promote`,
      key,
      post({ environment_id: target.id, dry_run: true }),
    );
    // The plan's reads: the same round trip, then the names of both sides.
    expect(plan).toMatchObject({ status: 200, d1RoundTrips: 2 });
  });

  it("the engine's queued list stays one statement per database with a lock and `serial` in force", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    await createDeployment(environmentId, [stack.id]);
    const queued = () =>
      measure("/internal/v1/deployments?status=queued", undefined, {
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      });
    const plain = await queued();
    await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: {
        required_approvals: 0,
        reviewer_role: "owner",
        prevent_self_review: true,
        wait_timer: 0,
        concurrency: "serial",
      },
    });
    await request("POST", `/v1/environments/${environmentId}/lock`, {
      key: owner.key,
      body: { reason: "counted" },
    });
    const held = await queued();
    expect(held.d1Statements).toBe(plain.d1Statements);
    expect(held.d1RoundTrips).toBe(plain.d1RoundTrips);
  });
});
