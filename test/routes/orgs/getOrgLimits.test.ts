/** getOrgLimits: GET /v1/orgs/{org_id}/limits (API_CONTRACT §29). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import {
  createApiKey,
  createCaller,
  createComponent,
  createDeployment,
  createEnvironment,
  createIntegration,
  createOrgWithOwner,
  createProject,
  createStack,
  deriveKey,
} from "../../helpers/factories";
import { readLimits, setLimits, usedOf } from "../../helpers/limits";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";

describe("GET /v1/orgs/{org_id}/limits", () => {
  it("lists the seven limits in the contract's order with their defaults; a new organization counts its owner's key", async () => {
    const { org, owner } = await createOrgWithOwner();
    const record = await readLimits(owner);
    expect(record).toEqual({
      org_id: org.id,
      limits: [
        { name: "projects", limit: 100, used: 0 },
        { name: "environments", limit: 1000, used: 0 },
        { name: "variables", limit: 20000, used: 0 },
        { name: "api_keys", limit: 1000, used: 1 },
        { name: "integrations", limit: 200, used: 0 },
        { name: "audit_streams", limit: 5, used: 0 },
        { name: "deployments_per_day", limit: 2000, used: 0, reset: 0 },
      ],
    });
  });

  it("counts exactly what the organization holds at the moment of the read", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner); // and its default environment
    const other = await createProject(owner);
    const environment = await createEnvironment(project.id);
    const component = await createComponent(environment.id);
    for (const [path, name] of [
      [`/v1/environments/${project.default_environment_id}/variables`, "A"],
      [`/v1/environments/${environment.id}/variables`, "B"],
      [`/v1/components/${component.id}/variables`, "C"],
      [`/v1/environments/${other.default_environment_id}/variables`, "D"],
    ] as const) {
      const res = await request("POST", path, { key: owner.key, body: { name, type: "string", value: "v" } });
      expect(res.status, res.raw).toBe(201);
    }
    await createIntegration(project.id);
    await createIntegration(other.id);
    await createCaller(org, "member", owner); // a key of another account
    await deriveKey(owner, { scopes: ["projects:read"] }); // a key made by a key
    await createApiKey(owner, { expires_at: new Date(Date.now() + 1500).toISOString() }); // expires soon
    const stack = await createStack(project.default_environment_id);
    const before = Date.now();
    await createDeployment(project.default_environment_id, [stack.id]);
    await createDeployment(project.default_environment_id, [stack.id]);
    const read = await readLimits(owner);
    expect(Object.fromEntries(read.limits.map((l) => [l.name, l.used]))).toEqual({
      projects: 2,
      environments: 3,
      variables: 4,
      api_keys: 4,
      integrations: 2,
      audit_streams: 0,
      deployments_per_day: 2,
    });
    // The oldest counted deployment leaves the window 24 h after its creation, rounded up.
    const reset = read.limits.find((l) => l.name === "deployments_per_day")?.reset ?? 0;
    expect(reset).toBeLessThanOrEqual(86_400);
    expect(reset).toBeGreaterThanOrEqual(86_400 - Math.ceil((Date.now() - before) / 1000) - 1);
    // An expired key no longer counts, without anything being written.
    await sleep(1600);
    expect((await usedOf(owner)).api_keys).toBe(3);
  });

  it("shows the limits the operator set", async () => {
    const { org, owner } = await createOrgWithOwner();
    await setLimits(org.id, { projects: 3, deployments_per_day: 0 });
    const { limits } = await readLimits(owner);
    expect(limits.find((l) => l.name === "projects")?.limit).toBe(3);
    expect(limits.find((l) => l.name === "deployments_per_day")?.limit).toBe(0);
    expect(limits.find((l) => l.name === "variables")?.limit).toBe(20000);
  });

  it("any key of the organization may read them: a member's, a key restricted to projects, a key with only orgs:read", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const member = await createCaller(org, "member", owner);
    const restricted = await createApiKey(owner, { project_ids: [project.id] });
    const readOnly = await createApiKey(owner, { scopes: ["orgs:read"] });
    for (const caller of [member, restricted, readOnly]) {
      const res = await request<{ org_id: string }>("GET", `/v1/orgs/${org.id}/limits`, { key: caller.key });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.org_id).toBe(org.id);
    }
  });

  it("needs the scope orgs:read", async () => {
    const { owner } = await createOrgWithOwner();
    const scoped = await createApiKey(owner, { scopes: ["projects:read"] });
    const res = await request("GET", `/v1/orgs/${owner.orgId}/limits`, { key: scoped.key });
    const body = expectError(res, 403, "forbidden");
    expect(body.message).toContain("orgs:read");
  });

  it("another organization, or one that does not exist, is 404; an id of no form is 400", async () => {
    const { owner } = await createOrgWithOwner();
    const { org: other } = await createOrgWithOwner();
    expectError(await request("GET", `/v1/orgs/${other.id}/limits`, { key: owner.key }), 404, "not_found");
    expectError(await request("GET", `/v1/orgs/${UNKNOWN_ID}/limits`, { key: owner.key }), 404, "not_found");
    expectError(await request("GET", "/v1/orgs/not-an-id/limits", { key: owner.key }), 400, "bad_input");
  });

  runCommonRouteTests("GET /v1/orgs/{org_id}/limits", async () => {
    const { org, owner } = await createOrgWithOwner();
    return { method: "GET", path: `/v1/orgs/${org.id}/limits`, caller: owner };
  });
});
