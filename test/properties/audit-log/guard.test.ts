/**
 * The audit log (API_CONTRACT §14), through the real Worker and D1.
 *
 * The guard: every state-changing operation — each non-GET operation of /openapi.json, the
 * reveals (`variables:reveal`), and every internal route but its GETs — is run once by SCENARIO (public-steps.ts, variable-set-steps.ts and internal-steps.ts beside this file), and must write exactly one
 * entry in its request, with its operationId as `action`, the right actor and target. A new
 * operation fails the guard until it is added to SCENARIO, and then until it writes its entry.
 * The same run proves that no entry holds a variable value, a signing secret or an API key.
 */

import { beforeAll, describe, expect, it } from "vitest";
import { declaredRoutes } from "../../../src/http/route-meta";
import { documentedRoutes } from "../../../src/openapi/document";
import { OPERATIONS } from "../../../src/routes";
import { type Row, rowsOf, type State, type StepResult, secrets, UA } from "../../helpers/audit-log";
import {
  createCaller,
  createComponent,
  createOrgWithOwner,
  createProject,
  createStack,
} from "../../helpers/factories";
import { operations } from "../../helpers/openapi";
import { allowTheLocalReceiver } from "../../helpers/webhooks";
import { INTERNAL_STEPS } from "./internal-steps";
import { PUBLIC_STEPS } from "./public-steps";
import { VARIABLE_SET_STEPS } from "./variable-set-steps";

// The steps' webhook integrations deliver to the local receiver (http://127.0.0.1): no test
// sends to a real host name.
allowTheLocalReceiver();

/** One step per state-changing operation, by operationId (public-steps.ts, internal-steps.ts). */
const SCENARIO = { ...PUBLIC_STEPS, ...VARIABLE_SET_STEPS, ...INTERNAL_STEPS };

/**
 * The one non-GET operation that changes nothing: a test send is answered directly, stored
 * nowhere (API_CONTRACT §13), so it writes no entry (§14: no entry without its change).
 */
const CHANGES_NOTHING = new Set(["testIntegration"]);

/** Every state-changing operation: non-GET /v1 operations, the reveals, every internal non-GET route. */
async function stateChangingOperations(): Promise<string[]> {
  const published = (await operations())
    // A reveal (a value, an export) is a GET that writes its entry.
    .filter(
      (op) =>
        op.path.startsWith("/v1/") &&
        (op.method !== "get" || op.operation["x-required-scope"] === "variables:reveal"),
    )
    .map((op) => op.operation.operationId as string)
    .filter((op) => !CHANGES_NOTHING.has(op));
  // Every internal route but the engine's reads (a GET changes nothing).
  const internal = declaredRoutes(await documentedRoutes(OPERATIONS))
    .filter((r) => r.internal && r.method !== "GET")
    .map((r) => r.action as string);
  return [...published, ...internal];
}

describe("the guard: every state-changing operation writes exactly one entry", () => {
  const results = new Map<string, StepResult>();
  let state: State;

  beforeAll(async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    const spare = await createProject(owner);
    const component = await createComponent(project.default_environment_id);
    const stack = await createStack(project.default_environment_id);
    secrets.push(owner.key, owner.key.slice(4), member.key);
    state = {
      org,
      owner,
      member,
      project,
      spare,
      envId: project.default_environment_id,
      componentId: component.id,
      stackId: stack.id,
    };
    // Order: what a step needs is made by an earlier one.
    const order = [
      "internal.createOrg",
      "internal.createAccount",
      "internal.addOrgMember",
      "internal.createApiKey",
      "internal.revokeApiKey",
      "createProject",
      "replaceProject",
      "disconnectProject",
      "deleteProject",
      "createOrg",
      "addProjectMembers",
      "replaceProjectMember",
      "removeProjectMember",
      "createIntegration",
      "updateIntegration",
      "testIntegration",
      "redeliverDelivery",
      "recoverIntegration",
      "rotateIntegrationSecret",
      "internal.createIntegration",
      "createEnvironmentVariable",
      "createComponentVariable",
      "replaceVariable",
      "revealVariable",
      "deleteVariable",
      "internal.createEnvironment",
      "internal.createComponent",
      "internal.createStack",
      "internal.createResource",
      "internal.updateResource",
      "internal.createDeployment",
      "internal.updateDeployment",
      "internal.appendDeploymentLogs",
      "cancelDeployment",
      "redeployDeployment",
      "createApiKey",
      "revokeApiKey",
      "internal.createEvent",
      "internal.reencryptVariables",
    ];
    for (const op of [...order, ...Object.keys(SCENARIO).filter((k) => !order.includes(k))]) {
      const step = SCENARIO[op];
      if (step) results.set(op, await step(state));
    }
  });

  it("a test send, which changes nothing, writes no entry", async () => {
    for (const op of CHANGES_NOTHING) {
      const result = results.get(op);
      expect(result, op).toBeDefined();
      if (!result) continue;
      expect(result.res.status, `${op}: ${result.res.raw.slice(0, 200)}`).toBe(200);
      expect(await rowsOf(result.res.requestId), op).toEqual([]);
    }
  });

  it("SCENARIO covers every state-changing operation of /openapi.json and of the internal API", async () => {
    const all = await stateChangingOperations();
    expect(all.length).toBeGreaterThan(25);
    expect(
      all.filter((op) => !(op in SCENARIO)),
      "operations missing from SCENARIO",
    ).toEqual([]);
    expect(
      Object.keys(SCENARIO).filter((op) => !all.includes(op) && !CHANGES_NOTHING.has(op)),
      "SCENARIO names no operation",
    ).toEqual([]);
  });

  it("each succeeded and wrote one entry with its action, actor, target, request id, ip and user agent", async () => {
    for (const op of await stateChangingOperations()) {
      const result = results.get(op);
      expect(result, op).toBeDefined();
      if (!result) continue;
      const { res, expect: want, actor } = result;
      expect(res.status, `${op}: ${res.raw.slice(0, 200)}`).toBeLessThan(300);
      const rows = await rowsOf(res.requestId);
      expect(rows.length, `${op} entries`).toBe(1);
      const row = rows[0] as Row;
      expect(row.action).toBe(op);
      expect(row.request_id).toBe(res.requestId);
      expect(row.user_agent).toBe(UA);
      // The test client sends every request from a documentation-prefix IP (cf-connecting-ip).
      if (op !== "internal.reencryptVariables") expect(row.ip, op).toMatch(/^2001:db8:/);
      expect(row.target_type, op).toBe(want.target);
      if (want.targetId) expect(row.target_id, op).toBe(want.targetId);
      if (want.projectId !== undefined) expect(row.project_id, op).toBe(want.projectId);
      const orgId = want.orgId !== undefined ? want.orgId : actor === "admin" ? state.org.id : actor.orgId;
      expect(row.org_id, `${op} org_id`).toBe(orgId);
      if (actor === "admin") {
        expect([row.actor_type, row.actor_account_id, row.actor_api_key_id], op).toEqual([
          "admin",
          null,
          null,
        ]);
      } else {
        expect([row.actor_type, row.actor_account_id, row.actor_api_key_id], op).toEqual([
          "api_key",
          actor.accountId,
          actor.keyId,
        ]);
      }
      const changes =
        row.changes === null ? null : (JSON.parse(row.changes as string) as Record<string, unknown>);
      for (const field of want.changed ?? []) {
        const change = changes?.[field] as Record<string, unknown> | undefined;
        expect(change && Object.keys(change).sort(), `${op} changes.${field}`).toEqual(["from", "to"]);
      }
    }
  });

  it("no entry holds a variable value, a signing secret, a Slack URL or an API key", async () => {
    expect(secrets.length).toBeGreaterThan(8);
    const requestIds = [...results.values()].map((r) => r.res.requestId);
    let scanned = 0;
    for (const id of requestIds) {
      for (const row of await rowsOf(id)) {
        scanned++;
        const text = JSON.stringify(row);
        for (const secret of secrets)
          expect(text, `entry ${row.action} leaks a secret`).not.toContain(secret);
      }
    }
    expect(scanned).toBe(requestIds.length - CHANGES_NOTHING.size);
  });

  it("records changes as {from, to}: a replace shows both sides, a create starts from null", async () => {
    const replace = (await rowsOf(results.get("replaceProjectMember")?.res.requestId ?? ""))[0];
    expect(JSON.parse(replace?.changes as string)).toEqual({ role: { from: "viewer", to: "contributor" } });
    const created = (await rowsOf(results.get("createProject")?.res.requestId ?? ""))[0];
    expect(JSON.parse(created?.changes as string).name.from).toBeNull();
    const resource = (await rowsOf(results.get("internal.updateResource")?.res.requestId ?? ""))[0];
    expect(JSON.parse(resource?.changes as string)).toEqual({
      status: { from: "create_in_progress", to: "create_complete" },
    });
  });
});
