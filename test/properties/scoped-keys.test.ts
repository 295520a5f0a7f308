/**
 * Scoped API keys (API_CONTRACT §15): each operation's published `x-required-scope`, the scope
 * check before anything is read, and project-restricted keys that see nothing outside their
 * projects and hold no organization-wide power (§28). The key create with scopes: test/routes/internal/orgs/internalCreateApiKey.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internalOk, request } from "../helpers/api";
import {
  type Caller,
  createApiKey,
  createCaller,
  createComponent,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createResource,
  createStack,
  deriveKey,
  type Project,
  scopedKey,
  unique,
} from "../helpers/factories";
import { setLimits } from "../helpers/limits";
import { operations } from "../helpers/openapi";

const ALL_SCOPES = [
  "projects:read",
  "projects:write",
  "members:read",
  "members:write",
  "integrations:read",
  "integrations:write",
  "variables:read",
  "variables:write",
  "variables:reveal",
  "deployments:read",
  "deployments:write",
  "resources:read",
  "events:read",
  "audit:read",
  "audit:write",
  "orgs:read",
  "orgs:write",
  "api-keys:read",
  "api-keys:write",
];

type ErrorBody = {
  code: string;
  message: string;
  cause?: Array<{ path: string }> & { required_scope?: string };
};

/**
 * The scope each operation needs, written from the contract's words (not from src/http/scopes.ts):
 * `<area>:read` for GET, `<area>:write` otherwise, with the named exceptions.
 */
function expectedScope(method: string, path: string): string | null {
  if (path === "/v1/api-keys/current") return null;
  // API_CONTRACT §27: the token exchange takes no key; trusts are read and written with the keys' scopes.
  if (path === "/v1/oidc/token") return null;
  if (path.startsWith("/v1/api-keys") || path.startsWith("/v1/oidc-trusts"))
    return `api-keys:${method === "get" ? "read" : "write"}`;
  // A value's reveal, and a scope's export (API_CONTRACT §18).
  if (path === "/v1/variables/{variable_id}/value" || path.endsWith("/variables/export"))
    return "variables:reveal";
  if (path.endsWith("/audit-log")) return "audit:read";
  // API_CONTRACT §30: the audit streams, read with `audit:read` and written with `audit:write`.
  if (path.includes("/audit-streams")) return `audit:${method === "get" ? "read" : "write"}`;
  if (path.startsWith("/v1/events") || path.endsWith("/events")) return "events:read";
  const rw = method === "get" ? "read" : "write";
  if (path.includes("/notification-integrations")) return `integrations:${rw}`;
  if (path === "/v1/orgs/{org_id}/projects") return "projects:read";
  if (path.startsWith("/v1/orgs")) return `orgs:${rw}`;
  if (path.includes("/members")) return `members:${rw}`;
  if (path.includes("/variables")) return `variables:${rw}`;
  if (path.includes("/deployments")) return `deployments:${rw}`;
  if (path.includes("/resources")) return `resources:${rw}`;
  // Part four: an environment, a component or a stack (or an environment's protection or lock).
  if (/\/(environments|components|stacks)(\/|$)/.test(path)) return `environments:${rw}`;
  if (path.startsWith("/v1/projects")) return `projects:${rw}`;
  throw new Error(`no expected scope for ${method} ${path}`);
}

const SOME_ID = "7Hq3VnT5m2WcXbQ9pLk4Rz";

describe("x-required-scope", () => {
  it("every /v1 operation publishes the scope the contract gives it (none for api-keys/current)", async () => {
    const ops = (await operations()).filter((op) => op.path.startsWith("/v1/"));
    expect(ops.length).toBeGreaterThan(30);
    for (const op of ops) {
      const published = (op.operation as Record<string, unknown>)["x-required-scope"] ?? null;
      expect(published, `${op.method} ${op.path}`).toBe(expectedScope(op.method, op.path));
    }
  });

  it("every operation refuses a key without its scope with 403 forbidden naming it, before reading anything", async () => {
    const { owner } = await createOrgWithOwner();
    const ops = (await operations()).filter((op) => op.path.startsWith("/v1/"));
    const keys = new Map<string, string>();
    for (const op of ops) {
      const scope = expectedScope(op.method, op.path);
      if (!scope) continue;
      // Every other scope, so only the missing one can explain the refusal.
      let key = keys.get(scope);
      if (!key) {
        key = (await scopedKey(owner, { scopes: ALL_SCOPES.filter((s) => s !== scope) })).key;
        keys.set(scope, key);
      }
      // IDs of nothing and an invalid body: the scope check comes first, so neither is looked at.
      const path = op.path.replace(/{[^}]+}/g, op.path.startsWith("/v1/orgs/{") ? owner.orgId : SOME_ID);
      const res = await request<ErrorBody>(op.method.toUpperCase(), path, {
        key,
        body: op.method === "get" || op.method === "delete" ? undefined : { unknown_field: true },
      });
      expect(res.status, `${op.method} ${op.path}: ${res.raw}`).toBe(403);
      expect(res.body.code).toBe("forbidden");
      expect(res.body.message).toContain(`\`${scope}\``);
      expect(res.headers.get("x-ratelimit-limit"), "counted by the rate limit first").not.toBeNull();
    }
  });

  it("a key holding exactly the scope passes the check (and then meets the usual rules)", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const reader = await scopedKey(owner, { scopes: ["projects:read"] });
    expect((await request("GET", `/v1/projects/${project.id}`, { key: reader.key })).status).toBe(200);
    expect((await request("GET", `/v1/projects/${SOME_ID}`, { key: reader.key })).status).toBe(404);
    const del = await request<ErrorBody>("DELETE", `/v1/projects/${project.id}`, { key: reader.key });
    expect(del.status).toBe(403);
    expect(del.body.message).toContain("`projects:write`");
    expect((await request("GET", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(200);
    const everything = await scopedKey(owner, { scopes: ["*"] });
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: everything.key })).status).toBe(204);
    // The project's owner role alone does not give a key's account more than its scopes.
    const member = await createCaller({ id: owner.orgId, name: "", created_at: "" }, "member", owner);
    const memberKey = await createApiKey(member, { scopes: ["*"] }, owner);
    expect((await request("POST", "/v1/projects", { key: memberKey.key, body: { name: "x" } })).status).toBe(
      403,
    );
  });
});

type Listed = { data: Array<{ id: string; project_id?: string }>; has_more: boolean };

describe("a key restricted to one project", () => {
  async function world(): Promise<{ owner: Caller; inside: Project; outside: Project; key: string }> {
    const { owner } = await createOrgWithOwner();
    const inside = await createProject(owner);
    const outside = await createProject(owner);
    const key = (await scopedKey(owner, { project_ids: [inside.id] })).key;
    return { owner, inside, outside, key };
  }

  it("sees only that project in every list, and every other project is 404 with everything inside it", async () => {
    const { owner, inside, outside, key } = await world();
    const deployIn = async (project: Project) => {
      const stack = await createStack(project.default_environment_id);
      const deployment = await internalOk<{ id: string }>(
        "POST",
        `/environments/${project.default_environment_id}/deployments`,
        { stack_ids: [stack.id], data: { patch: [] } },
      );
      return { ...deployment, stackId: stack.id };
    };
    const depIn = await deployIn(inside);
    const depOut = await deployIn(outside);
    const componentOut = await createComponent(outside.default_environment_id);
    const resourceOut = await createResource(depOut.stackId, { resource_type: "bucket", physical_id: "b" });
    const integrationOut = await request<{ id: string }>(
      "POST",
      `/v1/projects/${outside.id}/notification-integrations`,
      { key: owner.key, body: { type: "webhook", url: "https://hooks.example.com/x" } },
    );
    const envOut = await createEnvironment(outside.id);
    const varOut = await request<{ id: string }>(
      "POST",
      `/v1/environments/${outside.default_environment_id}/variables`,
      { key: owner.key, body: { name: "A", value: "v", type: "string" } },
    );
    expect(varOut.status).toBe(201);

    for (const path of ["/v1/projects", `/v1/orgs/${owner.orgId}/projects`]) {
      const res = await request<Listed>("GET", path, { key });
      expect(res.status).toBe(200);
      expect(res.body.data.map((p) => p.id)).toEqual([inside.id]);
    }
    const deps = await request<Listed>("GET", "/v1/deployments", { key });
    expect(deps.body.data.map((d) => d.id)).toEqual([depIn.id]);
    // The org owner's unrestricted key sees both.
    const all = await request<Listed>("GET", "/v1/deployments", { key: owner.key });
    expect(all.body.data.map((d) => d.id).sort()).toEqual([depIn.id, depOut.id].sort());

    const hidden = [
      ["GET", `/v1/projects/${outside.id}`],
      ["PUT", `/v1/projects/${outside.id}`],
      ["DELETE", `/v1/projects/${outside.id}`],
      ["PATCH", `/v1/projects/${outside.id}/disconnect`],
      ["GET", `/v1/projects/${outside.id}/members`],
      ["GET", `/v1/projects/${outside.id}/notification-integrations`],
      ["GET", `/v1/environments/${outside.default_environment_id}/variables`],
      ["GET", `/v1/environments/${envOut.id}/deployments`],
      ["GET", `/v1/environments/${outside.default_environment_id}/resources`],
      ["GET", `/v1/variables/${varOut.body.id}`],
      ["GET", `/v1/variables/${varOut.body.id}/value`],
      ["DELETE", `/v1/variables/${varOut.body.id}`],
      ["GET", `/v1/deployments/${depOut.id}`],
      ["PATCH", `/v1/deployments/${depOut.id}/cancel`],
      ["GET", `/v1/stacks/${depOut.stackId}/deployments`],
      ["GET", `/v1/stacks/${depOut.stackId}/resources`],
      ["GET", `/v1/resources/${resourceOut.id}`],
      ["GET", `/v1/components/${componentOut.id}/variables`],
      ["GET", `/v1/projects/${outside.id}/notification-integrations/${integrationOut.body.id}`],
      ["GET", `/v1/projects/${outside.id}/notification-integrations/${integrationOut.body.id}/deliveries`],
      ["GET", `/v1/projects/${outside.id}/audit-log`],
    ] as const;
    for (const [method, path] of hidden) {
      const body =
        method === "PUT"
          ? { name: unique("p"), default_environment_id: outside.default_environment_id }
          : undefined;
      const res = await request<ErrorBody>(method, path, { key, body });
      expect(res.status, `${method} ${path}: ${res.raw}`).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    // Nothing was changed through it.
    expect((await request("GET", `/v1/variables/${varOut.body.id}`, { key: owner.key })).status).toBe(200);
    expect((await request("GET", `/v1/deployments/${depOut.id}`, { key: owner.key })).status).toBe(200);

    // Inside its project it acts with its account's roles.
    expect((await request("GET", `/v1/projects/${inside.id}`, { key })).status).toBe(200);
    expect((await request("GET", `/v1/deployments/${depIn.id}`, { key })).status).toBe(200);
    expect((await request("GET", `/v1/projects/${inside.id}/members`, { key })).status).toBe(200);
  });

  it("a key naming 100 projects works on every lookup and list (one JSON parameter, not 100)", async () => {
    const { owner, inside, outside } = await world();
    // 99 more projects of the organization, written straight to D1 (the public create is rate-limited),
    // past the default `projects` limit (API_CONTRACT §29), which the operator raises first.
    await setLimits(owner.orgId, { projects: 200 });
    const now = new Date().toISOString();
    const ids = Array.from({ length: 99 }, () => crypto.randomUUID().replace(/-/g, ""));
    await env.DB.batch(
      ids.map((id) =>
        env.DB.prepare(
          "INSERT INTO projects (id, org_id, name, name_key, default_environment_id, connection_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'connected', ?, ?)",
        ).bind(id, owner.orgId, `bulk-${id}`, `bulk-${id}`, crypto.randomUUID().replace(/-/g, ""), now, now),
      ),
    );
    const key = (await scopedKey(owner, { project_ids: [inside.id, ...ids] })).key;
    expect((await request("GET", `/v1/projects/${inside.id}`, { key })).status).toBe(200);
    expect((await request("GET", `/v1/projects/${outside.id}`, { key })).status).toBe(404);
    const listed = await request<Listed>("GET", "/v1/projects?limit=240", { key });
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBe(100);
    expect(listed.body.data.map((p) => p.id)).not.toContain(outside.id);
    expect((await request("GET", "/v1/deployments", { key })).status).toBe(200);
    expect((await request("GET", `/v1/projects/${inside.id}/audit-log`, { key })).status).toBe(200);
  });

  it("cannot create a project: 403 forbidden", async () => {
    const { key } = await world();
    const res = await request<ErrorBody>("POST", "/v1/projects", { key, body: { name: unique("p") } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
  });
});

type KeyList = { data: Array<{ id: string; revoked_at: string | null }>; has_more: boolean };

describe("a key restricted to projects holds no organization-wide power (§28)", () => {
  /**
   * An org owner's unrestricted key; a key of the same account restricted to project `a`, a key it
   * made and a key that one made (the family); and another restricted key of the same account,
   * outside the family.
   */
  async function world() {
    const { org, owner } = await createOrgWithOwner();
    const a = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [a.id] });
    const child = await deriveKey(restricted, { name: "child" });
    const grandchild = await deriveKey(child, { name: "grandchild" });
    const sibling = await createApiKey(owner, { project_ids: [a.id] });
    return { org, owner, a, restricted, child, grandchild, sibling };
  }
  const ids = (res: { body: KeyList }) => res.body.data.map((k) => k.id).sort();

  it("lists and reaches only itself and the keys made from it, at any depth", async () => {
    const { owner, restricted, child, grandchild, sibling } = await world();
    const family = [restricted.keyId, child.keyId, grandchild.keyId].sort();
    for (const query of ["", `?account_id=${owner.accountId}`]) {
      const listed = await request<KeyList>("GET", `/v1/api-keys${query}`, { key: restricted.key });
      expect(listed.status, listed.raw).toBe(200);
      expect(ids(listed)).toEqual(family);
    }
    // A key made from it is restricted too: its own family only.
    const fromChild = await request<KeyList>("GET", "/v1/api-keys", { key: child.key });
    expect(ids(fromChild)).toEqual([child.keyId, grandchild.keyId].sort());
    // The owner's unrestricted key still sees every key of the organization.
    const all = await request<KeyList>("GET", "/v1/api-keys", { key: owner.key });
    expect(ids(all)).toEqual([...family, owner.keyId, sibling.keyId].sort());

    for (const other of [owner.keyId, sibling.keyId]) {
      for (const method of ["GET", "DELETE"]) {
        const res = await request<ErrorBody>(method, `/v1/api-keys/${other}`, { key: restricted.key });
        expect([res.status, res.body.code], `${method} ${other}`).toEqual([404, "not_found"]);
      }
    }
    // Still valid, unrevoked.
    const ownerKey = await request<{ id: string }>("GET", "/v1/api-keys/current", { key: owner.key });
    expect(ownerKey.status).toBe(200);
    const siblingKey = await request<{ revoked_at: string | null }>("GET", `/v1/api-keys/${sibling.keyId}`, {
      key: owner.key,
    });
    expect(siblingKey.body.revoked_at).toBeNull();

    const got = await request<{ id: string }>("GET", `/v1/api-keys/${grandchild.keyId}`, {
      key: restricted.key,
    });
    expect([got.status, got.body.id]).toEqual([200, grandchild.keyId]);
    const revoked = await request("DELETE", `/v1/api-keys/${child.keyId}`, { key: restricted.key });
    expect(revoked.status).toBe(204);
    const after = await request<KeyList>("GET", "/v1/api-keys", { key: restricted.key });
    const revokedIds = after.body.data.filter((k) => k.revoked_at !== null).map((k) => k.id);
    expect(revokedIds.sort()).toEqual([child.keyId, grandchild.keyId].sort());
    expect((await request("GET", "/v1/api-keys/current", { key: restricted.key })).status).toBe(200);
  });

  it("a restricted key of a member's account sees only its family, not the account's other keys", async () => {
    const { org, owner, a } = await world();
    const member = await createCaller(org, "member", owner);
    const restricted = await createApiKey(member, { project_ids: [a.id] }, owner);
    const listed = await request<KeyList>("GET", "/v1/api-keys", { key: restricted.key });
    expect(ids(listed)).toEqual([restricted.keyId]);
    const res = await request("GET", `/v1/api-keys/${member.keyId}`, { key: restricted.key });
    expect(res.status).toBe(404);
    // Its account's unrestricted key sees both.
    const mine = await request<KeyList>("GET", "/v1/api-keys", { key: member.key });
    expect(ids(mine)).toEqual([member.keyId, restricted.keyId].sort());
  });

  it("is refused every organization-wide action, keeps its role inside its projects, and makes narrower keys", async () => {
    const { org, a, restricted } = await world();
    const newOrg = await request<ErrorBody>("POST", "/v1/orgs", {
      key: restricted.key,
      body: { name: unique("org") },
    });
    expect([newOrg.status, newOrg.body.code]).toEqual([403, "unauthorized"]);
    const orgLog = await request<ErrorBody>("GET", `/v1/orgs/${org.id}/audit-log`, { key: restricted.key });
    expect([orgLog.status, orgLog.body.code]).toEqual([403, "unauthorized"]);
    expect(orgLog.body.message).toContain("project_ids");
    const project = await request<ErrorBody>("POST", "/v1/projects", {
      key: restricted.key,
      body: { name: unique("p") },
    });
    expect([project.status, project.body.code]).toEqual([403, "forbidden"]);

    // Inside its project it acts as its account: the owner's project audit log (project `owner`).
    const projectLog = await request<Listed>("GET", `/v1/projects/${a.id}/audit-log`, {
      key: restricted.key,
    });
    expect(projectLog.status, projectLog.raw).toBe(200);
    expect(projectLog.body.data.length).toBeGreaterThan(0);
    const narrower = await request<{ scopes: string[]; project_ids: string[] }>("POST", "/v1/api-keys", {
      key: restricted.key,
      body: { scopes: ["projects:read"] },
    });
    expect(narrower.status, narrower.raw).toBe(201);
    expect(narrower.body).toMatchObject({ scopes: ["projects:read"], project_ids: [a.id] });
  });
});
