/**
 * The MCP server at /mcp (docs/clients.md "MCP server"), through the official SDK's client over Streamable
 * HTTP, its requests served in-process by the real Worker (`exports.default.fetch`): the tools and
 * what they declare, reads and writes that land in the API as its own requests do (the same
 * records, audit entries, Idempotency-Keys and scope refusals), and every refusal an MCP answer,
 * never an HTTP 500. The client checks each `structuredContent` against the tool's published
 * output schema, as any MCP client may.
 */

import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { PromotionPlan } from "../../src/schemas/promotion-writes";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { request, TEST_CLIENT_IP } from "../helpers/api";
import { logLines, postLogs, reportOk } from "../helpers/engine";
import {
  type Caller,
  createApiKey,
  createDeployment,
  createEnvironment,
  createProjectWithStack,
  createStack,
  revokeKey,
} from "../helpers/factories";

const MCP_URL = new URL("http://api.test/mcp");

/** The Worker, in-process; every answer of /mcp carries nosniff as every answer of the API does. */
async function workerFetch(url: string | URL, init?: RequestInit): Promise<Response> {
  const res = await exports.default.fetch(new Request(url, init));
  if (res.headers.get("x-content-type-options") !== "nosniff") throw new Error(`${res.status}: no nosniff`);
  if (res.status >= 500) throw new Error(`/mcp answered ${res.status}: ${await res.clone().text()}`);
  return res;
}

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

/** An MCP client of the Worker, connected with `key` (as a bearer token, or in x-api-key). */
async function connect(key: string, via: "bearer" | "x-api-key" = "bearer"): Promise<Client> {
  const auth: Record<string, string> =
    via === "bearer" ? { authorization: `Bearer ${key}` } : { "x-api-key": key };
  const transport = new StreamableHTTPClientTransport(MCP_URL, {
    fetch: workerFetch,
    requestInit: { headers: { ...auth, "cf-connecting-ip": TEST_CLIENT_IP, "user-agent": "mcp-test/1.0" } },
  });
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A tool's result, which must not be an error; its structured content. */
async function ok<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** A tool's result, which must be an error; its text. */
async function refused(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, JSON.stringify(result)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return (result.content as Array<{ text: string }>).map((c) => c.text).join("\n");
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** One raw POST to /mcp (no SDK): what a client that does not retry or interpret sees. */
function post(headers: Record<string, string>, body: unknown = initialize) {
  return exports.default.fetch(
    new Request(MCP_URL, {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "content-type": "application/json",
        "cf-connecting-ip": TEST_CLIENT_IP,
        ...headers,
      },
      body: JSON.stringify(body),
    }),
  );
}

type Deployment = DeploymentRecord;
type Page<T> = { data: T[]; has_more: boolean; next_page?: string };

const READS = [
  "get_deployment",
  "get_environment",
  "get_org_limits",
  "list_deployments",
  "list_environments",
  "list_projects",
  "list_variable_versions",
  "plan_promotion",
  "plan_variable_changes",
  "wait_for_deployment",
];
const WRITES = [
  "apply_variable_changes",
  "conclude_check",
  "lock_environment",
  "promote_deployment",
  "restore_variable_version",
  "review_deployment",
  "start_deployment",
  "unlock_environment",
];

/**
 * Where a tool schema is less portable than MCP clients need: a `type` that is an array, or a
 * (sub)schema with no keyword but annotations, which admits anything.
 */
function unportable(schema: unknown, path: string): string[] {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return [];
  const s = schema as Record<string, unknown>;
  const found: string[] = [];
  if (Array.isArray(s.type)) found.push(`${path}: type ${JSON.stringify(s.type)}`);
  const annotations = ["$schema", "title", "description", "default", "examples", "deprecated"];
  if (Object.keys(s).every((k) => annotations.includes(k))) found.push(`${path}: constrains nothing`);
  for (const key of ["properties", "patternProperties", "$defs", "definitions"]) {
    const map = s[key];
    if (map && typeof map === "object")
      for (const [name, sub] of Object.entries(map)) found.push(...unportable(sub, `${path}.${key}.${name}`));
  }
  for (const key of ["items", "additionalProperties", "propertyNames", "not"])
    found.push(...unportable(s[key], `${path}.${key}`));
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    const list = s[key];
    if (Array.isArray(list))
      for (const [i, sub] of list.entries()) found.push(...unportable(sub, `${path}.${key}[${i}]`));
  }
  return found;
}

describe("MCP server", () => {
  it("lists every tool with its input and output schemas and its hints; /mcp is not in /openapi.json", async () => {
    const { owner } = await createProjectWithStack();
    const client = await connect(owner.key);
    expect(client.getServerVersion()?.name).toBe("deploy-platform-api");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...READS, ...WRITES].sort());
    for (const t of tools) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description, t.name).toBeTruthy();
      expect(t.inputSchema.type, t.name).toBe("object");
      expect(t.outputSchema?.type, t.name).toBe("object");
      // Strict arguments: an argument the tool does not name is refused, as the API refuses an unknown field.
      expect((t.inputSchema as { additionalProperties?: unknown }).additionalProperties, t.name).toBe(false);
      // Portable (the MCP Inspector's check): no `type` array, no schema that constrains nothing.
      expect(unportable(t.inputSchema, "inputSchema"), t.name).toEqual([]);
      expect(unportable(t.outputSchema, "outputSchema"), t.name).toEqual([]);
      const hints = t.annotations;
      expect(hints?.readOnlyHint, t.name).toBe(READS.includes(t.name));
      expect(typeof hints?.destructiveHint, t.name).toBe("boolean");
      expect(typeof hints?.idempotentHint, t.name).toBe("boolean");
      expect(hints?.openWorldHint, t.name).toBe(false);
      if (hints?.readOnlyHint) expect(hints.destructiveHint, t.name).toBe(false);
    }
    const destructive = tools.filter((t) => t.annotations?.destructiveHint).map((t) => t.name);
    expect(destructive.sort()).toEqual(WRITES.filter((w) => w !== "lock_environment").sort());

    const document = await request<{ info: { version: string }; paths: Record<string, unknown> }>(
      "GET",
      "/openapi.json",
    );
    expect(Object.keys(document.body.paths).filter((p) => p.includes("mcp"))).toEqual([]);
    expect(client.getServerVersion()?.version).toBe(document.body.info.version);
  });

  it("reads: projects, environments, a deployment with the end of a long timeline, a wait", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const client = await connect(owner.key, "x-api-key");

    const projects = await ok<Page<{ id: string }>>(client, "list_projects", { limit: 240 });
    expect(projects.data.map((p) => p.id)).toContain(project.id);
    const environments = await ok<Page<{ id: string }>>(client, "list_environments", {
      project_id: project.id,
    });
    expect(environments.data.map((e) => e.id)).toEqual([environmentId]);
    const read = await ok<{ environment: { id: string }; protection: { locked: unknown } }>(
      client,
      "get_environment",
      { environment_id: environmentId },
    );
    expect(read.environment.id).toBe(environmentId);
    expect(read.protection.locked).toBeNull();

    // 1 creation entry and 2,500 log lines: more than a page, so the tail is found by searching.
    const deployment = await createDeployment(environmentId, [stack.id]);
    for (let i = 0; i < 3; i++) {
      const lines = logLines(i < 2 ? 1000 : 500, `batch${i}`);
      expect((await postLogs(deployment.id, lines)).status).toBe(202);
    }
    const got = await ok<{ deployment: Deployment; timeline: { length: number; tail: TimelineEntry[] } }>(
      client,
      "get_deployment",
      { deployment_id: deployment.id, timeline_tail: 3 },
    );
    expect(got.deployment.id).toBe(deployment.id);
    expect(got.timeline.length).toBe(2501);
    expect(got.timeline.tail.map((e) => [e.seq, e.message])).toEqual([
      [2499, "batch2 498"],
      [2500, "batch2 499"],
      [2501, "batch2 500"],
    ]);
    const short = await ok<{ timeline: { length: number; tail: TimelineEntry[] } }>(
      client,
      "get_deployment",
      {
        deployment_id: (await createDeployment(environmentId, [stack.id])).id,
      },
    );
    expect(short.timeline.length).toBe(1);
    expect(short.timeline.tail.map((e) => e.status)).toEqual(["queued"]);

    const listed = await ok<Page<Deployment>>(client, "list_deployments", {
      environment_id: environmentId,
      status: ["queued"],
    });
    expect(listed.data.map((d) => d.id)).toContain(deployment.id);

    await reportOk(deployment.id, { status: "in_progress" });
    await reportOk(deployment.id, { status: "succeeded" });
    const waited = await ok<{ deployment: Deployment; final: boolean }>(client, "wait_for_deployment", {
      deployment_id: deployment.id,
      timeout_seconds: 1,
    });
    expect([waited.deployment.status, waited.final]).toEqual(["succeeded", true]);
  });

  it("get_org_limits: the organization's limits, as GET /v1/orgs/{org_id}/limits answers them", async () => {
    const { owner } = await createProjectWithStack();
    const client = await connect(owner.key);
    const limits = await ok<{ org_id: string; limits: { name: string; used: number }[] }>(
      client,
      "get_org_limits",
      {},
    );
    const rest = await request("GET", `/v1/orgs/${owner.orgId}/limits`, { key: owner.key });
    expect(limits).toEqual(rest.body);
    expect(limits.limits.find((l) => l.name === "projects")?.used).toBe(1);
  });

  it("start_deployment makes the API's own deployment: readable through REST, audited, idempotent", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const client = await connect(owner.key);
    const args = {
      environment_id: environmentId,
      patch: [{ op: "replace", path: "/services/web/image", value: "web:2" }],
      idempotency_key: `mcp-test-${crypto.randomUUID()}`,
    };
    const { deployment } = await ok<{ deployment: Deployment }>(client, "start_deployment", args);
    expect(deployment.stack_ids).toEqual([stack.id]);
    expect(deployment.created_by).toBe(owner.accountId);

    const rest = await request<Deployment>("GET", `/v1/deployments/${deployment.id}`, { key: owner.key });
    expect(rest.status).toBe(200);
    expect(rest.body.status).toBe("queued");
    expect(rest.body.data.patch).toEqual(args.patch);

    // The same Idempotency-Key and arguments: the first answer again, nothing made twice.
    const again = await ok<{ deployment: Deployment }>(client, "start_deployment", args);
    expect(again.deployment.id).toBe(deployment.id);
    const all = await request<Page<Deployment>>("GET", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
    });
    expect(all.body.data.map((d) => d.id)).toEqual([deployment.id]);

    // One audit entry, from the API's own route, naming the tool in its user agent.
    const audit = await request<Page<{ target: { id: string }; user_agent: string; request_id: string }>>(
      "GET",
      `/v1/projects/${project.id}/audit-log?action=createDeployment`,
      { key: owner.key },
    );
    expect(audit.body.data.map((e) => e.target.id)).toEqual([deployment.id]);
    expect(audit.body.data[0]?.user_agent).toBe("mcp-test/1.0 deploy-platform-mcp/start_deployment");
    expect(audit.body.data[0]?.request_id).toMatch(/\.1$/);
  });

  it("promotion: the plan changes nothing, then the promotion deploys the original's change", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const target = await createEnvironment(project.id);
    const targetStack = await createStack(target.id, { template_id: stack.template_id });
    const original = await createDeployment(environmentId, [stack.id]);
    await reportOk(original.id, { status: "in_progress" });
    await reportOk(original.id, { status: "succeeded" });
    const client = await connect(owner.key);

    const args = { deployment_id: original.id, environment_id: target.id };
    const plan = await ok<PromotionPlan>(client, "plan_promotion", args);
    expect(plan).toEqual({
      dry_run: true,
      environment_id: target.id,
      stacks: [{ from: stack.id, to: targetStack.id }],
      variables: [],
    });
    const before = await request<Page<Deployment>>("GET", `/v1/environments/${target.id}/deployments`, {
      key: owner.key,
    });
    expect(before.body.data).toEqual([]);

    const { deployment } = await ok<{ deployment: Deployment }>(client, "promote_deployment", args);
    expect(deployment).toMatchObject({
      environment_id: target.id,
      stack_ids: [targetStack.id],
      promoted_from: original.id,
      status: "queued",
    });
    expect(deployment.data.patch).toEqual(original.data.patch);

    // A deployment that did not succeed: the API's refusal, passed through.
    const queued = await createDeployment(environmentId, [stack.id]);
    const text = await refused(client, "plan_promotion", { ...args, deployment_id: queued.id });
    expect(text).toMatch(/^The API refused \(409 conflict\): /);
  });

  it("variables: a planned change applied at its base version, its versions, a restore", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    const client = await connect(owner.key);
    const scope = { type: "environment", id: environmentId };
    const variables = { API_URL: { type: "string", value: "https://a.example" } };

    const plan = await ok<{ version: number; base_version: number; dry_run: boolean }>(
      client,
      "plan_variable_changes",
      { scope, variables },
    );
    expect(plan).toMatchObject({ version: 1, base_version: 0, dry_run: true });
    const none = await ok<Page<unknown>>(client, "list_variable_versions", { scope });
    expect(none.data).toEqual([]);

    const applied = await ok<{ version: number }>(client, "apply_variable_changes", {
      scope,
      variables,
      base_version: plan.base_version,
    });
    expect(applied.version).toBe(1);
    await ok(client, "apply_variable_changes", {
      scope,
      variables: { API_URL: { type: "string", value: "https://b.example" } },
    });
    // A change planned against version 0, applied now that the scope is at 2: refused, with the API's cause.
    const stale = await refused(client, "apply_variable_changes", { scope, variables, base_version: 0 });
    expect(stale).toMatch(/409 conflict/);
    expect(stale).toMatch(/"path":"base_version"/);

    const versions = await ok<Page<{ version: number }>>(client, "list_variable_versions", { scope });
    expect(versions.data.map((v) => v.version)).toEqual([2, 1]);
    const dry = await ok<{ version: number; dry_run: boolean }>(client, "restore_variable_version", {
      scope,
      version: 1,
      dry_run: true,
    });
    expect(dry).toMatchObject({ version: 3, dry_run: true });
    const restored = await ok<{ version: number }>(client, "restore_variable_version", { scope, version: 1 });
    expect(restored.version).toBe(3);
    const listed = await request<{ data: Array<{ name: string; id: string }> }>(
      "GET",
      `/v1/environments/${environmentId}/variables`,
      { key: owner.key },
    );
    const id = listed.body.data.find((v) => v.name === "API_URL")?.id;
    const value = await request<{ value: string }>("GET", `/v1/variables/${id}/value`, { key: owner.key });
    expect(value.body.value).toBe("https://a.example");
  });

  it("lock, unlock and a review: a waiting deployment held, released, approved", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const client = await connect(owner.key);

    const locked = await ok<{ protection: { locked: { reason: string } | null } }>(
      client,
      "lock_environment",
      {
        environment_id: environmentId,
        reason: "release freeze",
      },
    );
    expect(locked.protection.locked?.reason).toBe("release freeze");
    const again = await refused(client, "lock_environment", {
      environment_id: environmentId,
      reason: "twice",
    });
    expect(again).toMatch(/409 conflict/);
    const { deployment } = await ok<{ deployment: Deployment }>(client, "start_deployment", {
      environment_id: environmentId,
    });
    expect([deployment.status, deployment.gate?.blocked_by]).toEqual(["waiting", ["lock"]]);
    expect(await ok(client, "unlock_environment", { environment_id: environmentId })).toEqual({
      environment_id: environmentId,
      locked: false,
    });
    const released = await request<Deployment>("GET", `/v1/deployments/${deployment.id}`, { key: owner.key });
    expect(released.body.status).toBe("queued");

    const protection = {
      required_approvals: 1,
      reviewer_role: "owner",
      prevent_self_review: true,
      wait_timer: 0,
      concurrency: "parallel",
    };
    const put = await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: protection,
    });
    expect(put.status).toBe(200);
    // Made by the engine (no account), so the owner may review it.
    const waiting = await createDeployment(environmentId, [stack.id]);
    expect(waiting.status).toBe("waiting");
    const reviewed = await ok<{ deployment: Deployment }>(client, "review_deployment", {
      deployment_id: waiting.id,
      state: "approved",
      comment: "looks good",
    });
    expect(reviewed.deployment.status).toBe("queued");
    const twice = await refused(client, "review_deployment", {
      deployment_id: waiting.id,
      state: "approved",
    });
    expect(twice).toMatch(/409 conflict/);
  });

  it("conclude_check: a check of a waiting deployment, concluded once; the last pass releases it", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const client = await connect(owner.key);
    const put = await request("PUT", `/v1/environments/${environmentId}/protection`, {
      key: owner.key,
      body: {
        required_approvals: 0,
        reviewer_role: "owner",
        prevent_self_review: true,
        wait_timer: 0,
        concurrency: "parallel",
        checks: [{ name: "e2e", timeout: 3600, on_timeout: "fail" }],
      },
    });
    expect(put.status).toBe(200);
    const waiting = await createDeployment(environmentId, [stack.id]);
    expect(waiting.gate?.blocked_by).toEqual(["check"]);
    const concluded = await ok<{ deployment: Deployment }>(client, "conclude_check", {
      deployment_id: waiting.id,
      name: "e2e",
      conclusion: "passed",
      details_url: "https://ci.example.com/runs/1",
    });
    expect(concluded.deployment.status).toBe("queued");
    expect(concluded.deployment.gate?.checks[0]).toMatchObject({
      state: "passed",
      details_url: "https://ci.example.com/runs/1",
    });
    expect(
      await refused(client, "conclude_check", {
        deployment_id: waiting.id,
        name: "e2e",
        conclusion: "failed",
      }),
    ).toMatch(/409 conflict/);
    // An argument given as null is one left out, as the API takes a null optional field.
    const next = await createDeployment(environmentId, [stack.id]);
    const bare = await ok<{ deployment: Deployment }>(client, "conclude_check", {
      deployment_id: next.id,
      name: "e2e",
      conclusion: "passed",
      details_url: null,
      summary: null,
    });
    expect(bare.deployment.gate?.checks[0]).toMatchObject({
      state: "passed",
      details_url: null,
      summary: null,
    });
    // Only an optional argument: an unknown one is refused though null, a required one as null.
    const other = await createDeployment(environmentId, [stack.id]);
    const base = { deployment_id: other.id, name: "e2e" };
    expect(
      await refused(client, "conclude_check", { ...base, conclusion: "passed", detail_url: null }),
    ).toMatch(/detail_url/);
    expect(
      await refused(client, "conclude_check", { deployment_id: other.id, name: null, conclusion: "passed" }),
    ).toMatch(/received null at name/);
  });
});

describe("MCP refusals are MCP errors, never HTTP 500", () => {
  const expectJsonRpcRefusal = async (res: Response, status: number) => {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as {
      jsonrpc: string;
      id: unknown;
      error: { code: number; message: string };
    };
    expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } });
    return body.error;
  };

  it("without a key, with a malformed or unknown one, with two different ones: 401, a JSON-RPC error", async () => {
    const { owner } = await createProjectWithStack();
    const missing = await expectJsonRpcRefusal(await post({}), 401);
    expect(missing.message).toMatch(/API key is required/);
    const res = await post({ authorization: "Bearer dpk_unknown" });
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
    // Counted against the anonymous window as a failed /v1 authentication is.
    expect(res.headers.get("ratelimit-policy")).toMatch(/^"anonymous"/);
    await expectJsonRpcRefusal(res, 401);
    await expectJsonRpcRefusal(await post({ authorization: "Basic abc" }), 401);
    const other = (await createApiKey(owner)).key;
    const both = await expectJsonRpcRefusal(
      await post({ authorization: `Bearer ${owner.key}`, "x-api-key": other }),
      401,
    );
    expect(both.message).toMatch(/different keys/);

    // The SDK's client: the connection fails with the 401.
    const error = await connect("dpk_not-a-real-key").then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
  });

  it("a key revoked after connecting: its next call is refused (401), and a new connection too", async () => {
    const { owner } = await createProjectWithStack();
    const caller = await createApiKey(owner);
    const client = await connect(caller.key);
    await ok(client, "list_projects", {});
    await revokeKey(caller.keyId);
    const error = await client.callTool({ name: "list_projects", arguments: {} }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
    await expect(connect(caller.key)).rejects.toThrow(StreamableHTTPError);
  });

  it("arguments outside a tool's schema, an unknown tool, GET: errors, and nothing reaches the API", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    const client = await connect(owner.key);
    expect(await refused(client, "get_deployment", { deployment_id: "../api-keys" })).toMatch(
      /Input validation error/,
    );
    expect(await refused(client, "list_projects", { limit: 10_000 })).toMatch(/Input validation error/);
    expect(await refused(client, "start_deployment", { environment_id: environmentId, extra: 1 })).toMatch(
      /Input validation error/,
    );
    expect(await refused(client, "lock_environment", { environment_id: environmentId })).toMatch(
      /Input validation error/,
    );
    expect(await refused(client, "no_such_tool", {})).toMatch(/not found/);
    const none = await request<Page<unknown>>("GET", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
    });
    expect(none.body.data).toEqual([]);
    const audit = await request<Page<unknown>>("GET", `/v1/projects/${project.id}/audit-log`, {
      key: owner.key,
    });
    expect(audit.body.data.filter((e) => JSON.stringify(e).includes("deploy-platform-mcp"))).toEqual([]);

    const get = await exports.default.fetch(
      new Request(MCP_URL, {
        headers: { accept: "text/event-stream", authorization: `Bearer ${owner.key}` },
      }),
    );
    expect(get.status).toBe(405);
    // A body that is not JSON-RPC: the transport's own 400, a JSON-RPC error.
    const junk = await post({ authorization: `Bearer ${owner.key}` }, { hello: "world" });
    expect(junk.status).toBe(400);
    expect(((await junk.json()) as { jsonrpc: string }).jsonrpc).toBe("2.0");
  });

  it("a key without a tool's scope: the API's 403, naming the scope it needs", async () => {
    const { owner, environmentId } = await createProjectWithStack();
    const narrow = await createApiKey(owner, { scopes: ["deployments:read"] });
    const client = await connect(narrow.key);
    // Listing the tools needs no scope; each call needs its operation's.
    expect((await client.listTools()).tools.length).toBe(READS.length + WRITES.length);
    const start = await refused(client, "start_deployment", { environment_id: environmentId });
    expect(start).toMatch(/403 forbidden/);
    expect(start).toMatch(/`deployments:write`/);
    expect(await refused(client, "list_projects", {})).toMatch(/`projects:read`/);
    await ok(client, "list_deployments", { environment_id: environmentId });
  });

  it("a tool call counts against the key's rate limit as its /v1 request does; listing tools does not", async () => {
    const { owner } = await createProjectWithStack();
    const caller: Caller = await createApiKey(owner);
    const client = await connect(caller.key);
    const before = await request("GET", "/v1/api-keys/current", { key: caller.key });
    const remaining = Number(before.headers.get("x-ratelimit-remaining"));
    await client.listTools();
    await ok(client, "list_projects", {});
    const after = await request("GET", "/v1/api-keys/current", { key: caller.key });
    // The tool's one request and this one.
    expect(Number(after.headers.get("x-ratelimit-remaining"))).toBe(remaining - 2);
  });
});

describe("the transport's rules (src/mcp/transport.ts), as the SDK's server transport has them", () => {
  const rpc = (id: number, method: string, params?: Record<string, unknown>) => ({
    jsonrpc: "2.0",
    id,
    method,
    ...(params === undefined ? {} : { params }),
  });

  it("initialize: the client's protocol revision when spoken, else the newest; ping; an unknown method", async () => {
    const { owner } = await createProjectWithStack();
    const auth = { authorization: `Bearer ${owner.key}` };
    const spoken = await post(auth);
    expect(spoken.status).toBe(200);
    const body = (await spoken.json()) as { id: number; result: Record<string, unknown> };
    expect(body.id).toBe(1);
    expect(body.result).toMatchObject({
      protocolVersion: "2025-06-18",
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: "deploy-platform-api" },
    });
    const future = await post(auth, {
      ...initialize,
      params: { ...initialize.params, protocolVersion: "2099-01-01" },
    });
    expect(((await future.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(
      "2025-11-25",
    );
    const ping = await post(auth, rpc(7, "ping"));
    expect(await ping.json()).toEqual({ jsonrpc: "2.0", id: 7, result: {} });
    const unknown = await post(auth, rpc(8, "resources/list"));
    expect(unknown.status).toBe(200);
    expect(await unknown.json()).toMatchObject({ jsonrpc: "2.0", id: 8, error: { code: -32601 } });
  });

  it("a batch answers each request in order; notifications alone are 202 with no body", async () => {
    const { owner } = await createProjectWithStack();
    const auth = { authorization: `Bearer ${owner.key}` };
    const batch = await post(auth, [
      rpc(1, "ping"),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      rpc("two" as unknown as number, "tools/call", { name: "list_projects", arguments: { limit: 1 } }),
    ]);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as Array<{ id: unknown; result: { structuredContent?: unknown } }>;
    expect(answers.map((a) => a.id)).toEqual([1, "two"]);
    expect(answers[1]?.result.structuredContent).toMatchObject({ has_more: false });
    const notification = await post(auth, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe("");
    // An initialize must come alone.
    const two = await post(auth, [initialize, rpc(2, "ping")]);
    expect(two.status).toBe(400);
    expect(await two.json()).toMatchObject({ id: null, error: { code: -32600 } });
  });

  it("the tool calls of one batch get request ids of their own (<id>.1, <id>.2), each on its audit entry", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    const requestId = `batch-${crypto.randomUUID()}`;
    const start = (id: number) =>
      rpc(id, "tools/call", {
        name: "start_deployment",
        arguments: { environment_id: environmentId, idempotency_key: `mcp-batch-${crypto.randomUUID()}` },
      });
    const batch = await post({ authorization: `Bearer ${owner.key}`, "x-request-id": requestId }, [
      start(1),
      start(2),
    ]);
    expect(batch.status).toBe(200);
    const answers = (await batch.json()) as Array<{ result?: { isError?: boolean } }>;
    expect(answers.map((a) => a.result?.isError ?? false)).toEqual([false, false]);
    const audit = await request<Page<{ request_id: string }>>(
      "GET",
      `/v1/projects/${project.id}/audit-log?action=createDeployment`,
      { key: owner.key },
    );
    expect(audit.body.data.map((e) => e.request_id).sort()).toEqual([`${requestId}.1`, `${requestId}.2`]);
  });

  it("refused before any message is read: Accept, Content-Type, JSON, protocol version, body size", async () => {
    const { owner } = await createProjectWithStack();
    const auth = { authorization: `Bearer ${owner.key}` };
    const refusal = async (res: Response, status: number, code: number) => {
      expect(res.status).toBe(status);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
    };
    await refusal(await post({ ...auth, accept: "application/json" }), 406, -32000);
    await refusal(await post({ ...auth, "content-type": "text/plain" }), 415, -32000);
    await refusal(
      await exports.default.fetch(
        new Request(MCP_URL, {
          method: "POST",
          headers: {
            ...auth,
            accept: "application/json, text/event-stream",
            "content-type": "application/json",
          },
          body: "{not json",
        }),
      ),
      400,
      -32700,
    );
    await refusal(await post(auth, []), 400, -32700);
    await refusal(await post(auth, { jsonrpc: "2.0", id: null, method: "ping" }), 400, -32700);
    await refusal(await post({ ...auth, "mcp-protocol-version": "1999-01-01" }, rpc(3, "ping")), 400, -32000);
    // The API's own bound on a body (API_CONTRACT §6), answered as a JSON-RPC error.
    const big = await post(
      auth,
      rpc(4, "tools/call", { name: "list_projects", arguments: { after: "x".repeat(1 << 20) } }),
    );
    expect(big.status).toBe(400);
    const error = ((await big.json()) as { error: { code: number; data: { code: string } } }).error;
    expect(error.code).toBe(-32000);
    expect(error.data.code).toBe("bad_input");
  });
});
