/**
 * The audit log (API_CONTRACT §14), through the real Worker and D1.
 *
 * The guard: every state-changing operation — each non-GET operation of /openapi.json, the
 * reveal, and every internal route — is run once by SCENARIO below, and must write exactly one
 * entry in its request, with its operationId as `action`, the right actor and target. A new
 * operation fails the guard until it is added to SCENARIO, and then until it writes its entry.
 * The same run proves that no entry holds a variable value, a signing secret or an API key.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { declaredRoutes } from "../src/http/route-meta";
import { type ApiResponse, internalOk, request } from "./helpers/api";
import {
  type Caller,
  createAccount,
  createCaller,
  createComponent,
  createOrgWithOwner,
  createProject,
  createStack,
  type Org,
  type Project,
  unique,
} from "./helpers/factories";
import { operations } from "./helpers/openapi";
import { writeDelivery, writeEvent } from "./helpers/webhooks";

type Row = Record<string, unknown>;

const UA = "audit-test/1.0";
let requestCounter = 0;
const newRequestId = () => `audit-${Date.now().toString(36)}-${(requestCounter++).toString(36)}`;

async function rowsOf(requestId: string): Promise<Row[]> {
  const { results } = await env.DB.prepare("SELECT * FROM audit_log WHERE request_id = ?")
    .bind(requestId)
    .all<Row>();
  return results;
}

/** A request with its own x-request-id, user agent and client IP. */
async function call<T = Row>(
  method: string,
  path: string,
  opts: { key?: string; admin?: boolean; body?: unknown; ip?: string } = {},
): Promise<ApiResponse<T> & { requestId: string }> {
  const requestId = newRequestId();
  const headers: Record<string, string> = { "x-request-id": requestId, "user-agent": UA };
  if (opts.admin) headers.authorization = `Bearer ${env.ADMIN_TOKEN}`;
  if (opts.ip) headers["cf-connecting-ip"] = opts.ip;
  const res = await request<T>(method, path, { key: opts.key ?? null, body: opts.body, headers });
  return { ...res, requestId };
}

/** The internal rotation sweep needs a previous key, so it runs with bindings of its own. */
async function callWithBindings(
  bindings: Record<string, string>,
  method: string,
  path: string,
  body?: unknown,
) {
  const requestId = newRequestId();
  const exec = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, {
      method,
      headers: {
        authorization: `Bearer ${env.ADMIN_TOKEN}`,
        "x-request-id": requestId,
        "user-agent": UA,
        "content-type": "application/json",
      },
      body: JSON.stringify(body ?? {}),
    }),
    { ...env, ...bindings },
    exec,
  );
  await waitOnExecutionContext(exec);
  const raw = await res.text();
  return { status: res.status, body: JSON.parse(raw) as Row, raw, headers: res.headers, requestId };
}

const randomKey = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

type Expectation = {
  target: string;
  /** The target's id, when the step knows it. */
  targetId?: string;
  projectId?: string | null;
  orgId?: string | null;
  /** Fields `changes` must hold. */
  changed?: string[];
};
type StepResult = {
  res: { status: number; raw: string; requestId: string };
  expect: Expectation;
  actor: Caller | "admin";
};

/** Everything the scenario creates, shared by its steps (they run in order). */
type State = {
  org: Org;
  owner: Caller;
  member: Caller;
  project: Project;
  spare: Project;
  envId: string;
  componentId: string;
  stackId: string;
  variableId?: string;
  integrationId?: string;
  resourceId?: string;
  deploymentId?: string;
  keyId?: string;
};

const secrets: string[] = [];
const VALUE = () => {
  const value = `s3cr3t-${crypto.randomUUID()}`;
  secrets.push(value);
  return value;
};

/** One step per state-changing operation, by operationId. */
const SCENARIO: Record<string, (s: State) => Promise<StepResult>> = {
  createProject: async (s) => {
    const res = await call<{ id: string }>("POST", "/v1/projects", {
      key: s.owner.key,
      body: { name: unique("p") },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "project", targetId: res.body.id, projectId: res.body.id, changed: ["name"] },
    };
  },
  replaceProject: async (s) => {
    const res = await call("PUT", `/v1/projects/${s.project.id}`, {
      key: s.owner.key,
      body: {
        name: unique("renamed"),
        description: "d",
        default_environment_id: s.project.default_environment_id,
      },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: s.project.id,
        projectId: s.project.id,
        changed: ["name", "description"],
      },
    };
  },
  disconnectProject: async (s) => {
    const res = await call("PATCH", `/v1/projects/${s.spare.id}/disconnect`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: s.spare.id,
        projectId: s.spare.id,
        changed: ["connection_status"],
      },
    };
  },
  deleteProject: async (s) => {
    const doomed = await createProject(s.owner);
    const res = await call("DELETE", `/v1/projects/${doomed.id}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: doomed.id,
        projectId: doomed.id,
        orgId: s.org.id,
        changed: ["name"],
      },
    };
  },
  createOrg: async (s) => {
    const res = await call<{ id: string }>("POST", "/v1/orgs", {
      key: s.owner.key,
      body: { name: unique("org") },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "organization", targetId: res.body.id, orgId: res.body.id, changed: ["name"] },
    };
  },
  addProjectMembers: async (s) => {
    const res = await call("POST", `/v1/projects/${s.project.id}/members`, {
      key: s.owner.key,
      body: { account_ids: [s.member.accountId], role: "viewer" },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "project", targetId: s.project.id, projectId: s.project.id, changed: ["members"] },
    };
  },
  replaceProjectMember: async (s) => {
    const res = await call("PUT", `/v1/projects/${s.project.id}/members/${s.member.accountId}`, {
      key: s.owner.key,
      body: { role: "contributor" },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project_member",
        targetId: s.member.accountId,
        projectId: s.project.id,
        changed: ["role"],
      },
    };
  },
  removeProjectMember: async (s) => {
    const res = await call("DELETE", `/v1/projects/${s.project.id}/members/${s.member.accountId}`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project_member",
        targetId: s.member.accountId,
        projectId: s.project.id,
        changed: ["role"],
      },
    };
  },
  createIntegration: async (s) => {
    const res = await call<{ id: string; signing_secret: string }>(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations`,
      {
        key: s.owner.key,
        body: { type: "webhook", url: "https://hooks.example.com/audit", configuration: { changelog: true } },
      },
    );
    s.integrationId = res.body.id;
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: res.body.id,
        projectId: s.project.id,
        changed: ["url", "configuration"],
      },
    };
  },
  updateIntegration: async (s) => {
    const res = await call(
      "PATCH",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}`,
      {
        key: s.owner.key,
        body: { configuration: { services_ok: true } },
      },
    );
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: s.integrationId,
        projectId: s.project.id,
        changed: ["configuration"],
      },
    };
  },
  testIntegration: async (s) => {
    // An integration whose stored URL the send-time check refuses: the test answers at once.
    const { id } = await internalOk<{ id: string }>(
      "POST",
      `/projects/${s.project.id}/notification-integrations`,
      {
        type: "webhook",
        url: "https://hooks.example.com/audit-test",
        configuration: {},
      },
    );
    await env.DB.prepare("UPDATE notification_integrations SET url = ? WHERE id = ?")
      .bind("http://127.0.0.1:9/refused", id)
      .run();
    const res = await call("POST", `/v1/projects/${s.project.id}/notification-integrations/${id}/test`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "notification_integration", targetId: id, projectId: s.project.id },
    };
  },
  redeliverDelivery: async (s) => {
    const event = await writeEvent(s.project.id, "changelog.created");
    const deliveryId = await writeDelivery(s.project.id, event.id, s.integrationId ?? "", {
      status: "failed",
    });
    const res = await call(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/deliveries/${deliveryId}/redeliver`,
      { key: s.owner.key },
    );
    return {
      res,
      actor: s.owner,
      expect: {
        target: "webhook_delivery",
        targetId: deliveryId,
        projectId: s.project.id,
        changed: ["status"],
      },
    };
  },
  recoverIntegration: async (s) => {
    const event = await writeEvent(s.project.id, "changelog.created");
    await writeDelivery(s.project.id, event.id, s.integrationId ?? "", { status: "skipped" });
    const res = await call(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/recover`,
      { key: s.owner.key, body: { since: new Date(Date.now() - 3600_000).toISOString() } },
    );
    return {
      res,
      actor: s.owner,
      expect: { target: "notification_integration", targetId: s.integrationId, projectId: s.project.id },
    };
  },
  rotateIntegrationSecret: async (s) => {
    const res = await call<{ signing_secret: string }>(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/rotate-secret`,
      { key: s.owner.key, body: { expire_previous_in: 60 } },
    );
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: s.integrationId,
        projectId: s.project.id,
        changed: ["previous_secret_expires_at"],
      },
    };
  },
  createEnvironmentVariable: async (s) => {
    const res = await call<{ id: string }>("POST", `/v1/environments/${s.envId}/variables`, {
      key: s.owner.key,
      body: { name: "AUDITED", type: "secret", value: VALUE() },
    });
    s.variableId = res.body.id;
    return {
      res,
      actor: s.owner,
      expect: {
        target: "variable",
        targetId: res.body.id,
        projectId: s.project.id,
        changed: ["name", "type"],
      },
    };
  },
  createComponentVariable: async (s) => {
    const res = await call<{ id: string }>("POST", `/v1/components/${s.componentId}/variables`, {
      key: s.owner.key,
      body: { name: "PLAIN", type: "string", value: VALUE() },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: res.body.id, projectId: s.project.id, changed: ["name"] },
    };
  },
  replaceVariable: async (s) => {
    const res = await call("PUT", `/v1/variables/${s.variableId}`, {
      key: s.owner.key,
      body: { name: "AUDITED_2", type: "secure_string", value: VALUE() },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "variable",
        targetId: s.variableId,
        projectId: s.project.id,
        changed: ["name", "type"],
      },
    };
  },
  revealVariable: async (s) => {
    const res = await call("GET", `/v1/variables/${s.variableId}/value`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: s.variableId, projectId: s.project.id },
    };
  },
  deleteVariable: async (s) => {
    const res = await call("DELETE", `/v1/variables/${s.variableId}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: s.variableId, projectId: s.project.id, changed: ["name"] },
    };
  },
  cancelDeployment: async (s) => {
    const res = await call("PATCH", `/v1/deployments/${s.deploymentId}/cancel`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "deployment",
        targetId: s.deploymentId,
        projectId: s.project.id,
        changed: ["status"],
      },
    };
  },
  "internal.createOrg": async () => {
    const res = await call<{ id: string }>("POST", "/internal/v1/orgs", {
      admin: true,
      body: { name: unique("org") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "organization", targetId: res.body.id, orgId: res.body.id, changed: ["name"] },
    };
  },
  "internal.createAccount": async () => {
    const res = await call<{ id: string }>("POST", "/internal/v1/accounts", {
      admin: true,
      body: { name: unique("acc") },
    });
    // An account belongs to no organization: its entry has org_id null.
    return {
      res,
      actor: "admin",
      expect: { target: "account", targetId: res.body.id, orgId: null, changed: ["name"] },
    };
  },
  "internal.addOrgMember": async (s) => {
    const account = await createAccount();
    const res = await call("POST", `/internal/v1/orgs/${s.org.id}/members`, {
      admin: true,
      body: { account_id: account.id, role: "member" },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "org_member", targetId: account.id, orgId: s.org.id, changed: ["role"] },
    };
  },
  "internal.createApiKey": async (s) => {
    const res = await call<{ id: string; key: string }>("POST", `/internal/v1/orgs/${s.org.id}/api-keys`, {
      admin: true,
      body: { account_id: s.owner.accountId, created_by: s.owner.accountId, scopes: ["projects:read"] },
    });
    s.keyId = res.body.id;
    secrets.push(res.body.key, res.body.key.slice(4));
    return {
      res,
      actor: "admin",
      expect: { target: "api_key", targetId: res.body.id, orgId: s.org.id, changed: ["scopes"] },
    };
  },
  "internal.revokeApiKey": async (s) => {
    const res = await call("DELETE", `/internal/v1/api-keys/${s.keyId}`, { admin: true });
    return {
      res,
      actor: "admin",
      expect: { target: "api_key", targetId: s.keyId, orgId: s.org.id, changed: ["revoked_at"] },
    };
  },
  "internal.createEnvironment": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/projects/${s.project.id}/environments`, {
      admin: true,
      body: { name: unique("env") },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "environment",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["name"],
      },
    };
  },
  "internal.createComponent": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/components`, {
      admin: true,
      body: { name: unique("comp") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "component", targetId: res.body.id, projectId: s.project.id, orgId: s.org.id },
    };
  },
  "internal.createStack": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/stacks`, {
      admin: true,
      body: { name: unique("stack") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "stack", targetId: res.body.id, projectId: s.project.id, orgId: s.org.id },
    };
  },
  "internal.createResource": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/stacks/${s.stackId}/resources`, {
      admin: true,
      body: { resource_type: "bucket", physical_id: "b-1", status: "create_in_progress" },
    });
    s.resourceId = res.body.id;
    return {
      res,
      actor: "admin",
      expect: {
        target: "stack_resource",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.updateResource": async (s) => {
    const res = await call("PATCH", `/internal/v1/resources/${s.resourceId}`, {
      admin: true,
      body: { status: "create_complete" },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "stack_resource",
        targetId: s.resourceId,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.createDeployment": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/deployments`, {
      admin: true,
      body: { stack_ids: [s.stackId], data: { patch: [{ op: "add", path: "/x", value: VALUE() }] } },
    });
    s.deploymentId = res.body.id;
    return {
      res,
      actor: "admin",
      expect: {
        target: "deployment",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.updateDeployment": async (s) => {
    const res = await call("PATCH", `/internal/v1/deployments/${s.deploymentId}`, {
      admin: true,
      body: { status: "in_progress" },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "deployment",
        targetId: s.deploymentId,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.createEvent": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/projects/${s.project.id}/events`, {
      admin: true,
      body: { type: "changelog.created", data: { note: VALUE() } },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "event",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["type"],
      },
    };
  },
  "internal.createIntegration": async (s) => {
    const slackUrl = `https://hooks.slack.com/services/T000/B000/${crypto.randomUUID().replace(/-/g, "")}`;
    secrets.push(slackUrl);
    const res = await call<{ id: string; signing_secret: string }>(
      "POST",
      `/internal/v1/projects/${s.project.id}/notification-integrations`,
      {
        admin: true,
        body: { type: "slack", url: slackUrl },
      },
    );
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: "admin",
      expect: {
        target: "notification_integration",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["type"],
      },
    };
  },
  "internal.reencryptVariables": async (s) => {
    // A value under an old key, then the sweep with that key as the previous one.
    const oldKey = randomKey();
    const exec = createExecutionContext();
    const created = await createApp().fetch(
      new Request(`http://api.test/v1/environments/${s.envId}/variables`, {
        method: "POST",
        headers: { "x-api-key": s.owner.key, "content-type": "application/json" },
        body: JSON.stringify({ name: unique("OLD").replace(/-/g, "_"), type: "secret", value: VALUE() }),
      }),
      { ...env, VARIABLES_KEY: oldKey },
      exec,
    );
    await waitOnExecutionContext(exec);
    expect(created.status).toBe(201);
    const res = await callWithBindings(
      { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey },
      "POST",
      "/internal/v1/variables/reencrypt",
      { limit: 500 },
    );
    return {
      res,
      actor: "admin",
      expect: { target: "variables_key", orgId: null, changed: ["key_version"] },
    };
  },
};

/** Every state-changing operation: non-GET /v1 operations, the reveal, every internal route. */
async function stateChangingOperations(): Promise<string[]> {
  const published = (await operations())
    .filter((op) => op.path.startsWith("/v1/") && (op.method !== "get" || op.path.endsWith("/value")))
    .map((op) => op.operation.operationId as string);
  const internal = declaredRoutes(createApp() as never)
    .filter((r) => r.internal)
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
      "cancelDeployment",
      "internal.createEvent",
      "internal.reencryptVariables",
    ];
    for (const op of [...order, ...Object.keys(SCENARIO).filter((k) => !order.includes(k))]) {
      const step = SCENARIO[op];
      if (step) results.set(op, await step(state));
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
      Object.keys(SCENARIO).filter((op) => !all.includes(op)),
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
    expect(scanned).toBe(requestIds.length);
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
