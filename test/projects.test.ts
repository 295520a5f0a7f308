/**
 * The seven project operations (SPEC.md "Projects", API_CONTRACT §3 Project, §5, §8, §10).
 * Every response of a documented route is checked against /openapi.json (checkedRequest).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ProjectRole } from "../src/db/schema";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createComponent,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createStack,
  type Org,
  type Project,
  unique,
} from "./helpers/factories";
import { checkedRequest as request } from "./helpers/openapi";
import { runCommonRouteTests } from "./helpers/security";

type ProjectBody = Project & {
  description: string | null;
  icon: string | null;
  repo_id: string | null;
  updated_at: string;
};
type ProjectPage = { data: ProjectBody[]; has_more: boolean; next_page?: string };
type ErrorBody = { code: string; message: string; cause?: Array<{ path: string; message: string }> };
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An org member (no org power) with `role` on `project`, or with no membership when role is null. */
async function projectCaller(org: Org, owner: Caller, project: Project, role: ProjectRole | null) {
  const caller = await createCaller(org, "member", owner);
  if (role) await addProjectMember(owner, project.id, caller, role);
  return caller;
}

async function setup() {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  return { org, owner, project };
}

describe("POST /v1/projects", () => {
  it("creates a connected project with a production environment, caller as owner", async () => {
    const { org, owner } = await createOrgWithOwner();
    const res = await request<ProjectBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "Storefront", description: "shop", icon: "emoji:🚀" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      org_id: org.id,
      name: "Storefront",
      description: "shop",
      icon: "emoji:🚀",
      repo_id: null,
      default_environment_id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      connection_status: "connected",
      created_at: expect.stringMatching(TS),
      updated_at: res.body.created_at,
    });
    const envRow = await env.DB.prepare("SELECT name, project_id FROM environments WHERE id = ?")
      .bind(res.body.default_environment_id)
      .first<{ name: string; project_id: string }>();
    expect(envRow).toEqual({ name: "production", project_id: res.body.id });
    const members = await request<{ data: Array<{ account_id: string; role: string }> }>(
      "GET",
      `/v1/projects/${res.body.id}/members`,
      { key: owner.key },
    );
    expect(members.status).toBe(200);
    expect(members.body.data).toEqual([
      expect.objectContaining({ account_id: owner.accountId, role: "owner" }),
    ]);
  });

  it("accepts every identifier form for repo_id and every icon kind", async () => {
    const { owner } = await createOrgWithOwner();
    for (const [repo_id, icon] of [
      ["7Hq3VnT5m2WcXbQ9pLk4Rz", "icon:box"],
      ["0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c", "emoji:🚀"],
      ["0123456789abcdef0123456789abcdef", "url:https://example.com/i.png"],
      [null, null],
    ]) {
      const res = await request<ProjectBody>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: unique("p"), repo_id, icon },
      });
      expect(res.status).toBe(201);
      expect([res.body.repo_id, res.body.icon]).toEqual([repo_id, icon]);
    }
  });

  it("refuses a duplicate name regardless of case with 409, and frees it after delete", async () => {
    const { owner } = await createOrgWithOwner();
    const first = await createProject(owner, { name: "Api" });
    const dup = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body: { name: "aPI" } });
    expect([dup.status, dup.body.code]).toEqual([409, "conflict"]);
    expect((await request("DELETE", `/v1/projects/${first.id}`, { key: owner.key })).status).toBe(204);
    expect((await request("POST", "/v1/projects", { key: owner.key, body: { name: "API" } })).status).toBe(
      201,
    );
  });

  it("compares names Unicode-aware: letter case beyond ASCII and normalization forms", async () => {
    const { owner } = await createOrgWithOwner();
    await createProject(owner, { name: "Ärger" });
    await createProject(owner, { name: "caf\u00e9" });
    for (const name of ["äRGER", "cafe\u0301", "CAF\u00c9"]) {
      const res = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body: { name } });
      expect([res.status, res.body.code], name).toEqual([409, "conflict"]);
    }
  });

  it("the same name is fine in another organization", async () => {
    const a = await createOrgWithOwner();
    const b = await createOrgWithOwner();
    await createProject(a.owner, { name: "shared" });
    await createProject(b.owner, { name: "shared" });
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ name: "ok", icon: "rocket" }, "icon"],
    [{ name: "ok", icon: "emoji:" }, "icon"],
    [{ name: "ok", repo_id: "not an id" }, "repo_id"],
    [{ name: "ok", repo_id: "0B9F6A3C-1D2E-4F5A-8B7C-9D0E1F2A3B4C" }, "repo_id"],
    [{ name: "ok", description: "d".repeat(1001) }, "description"],
    [{ name: "ok", extra: 1 }, "extra"],
    [{ name: "ok", connection_status: "disconnected" }, "connection_status"],
    [{ name: 5 }, "name"],
  ])("refuses %j with bad_input naming %s", async (body, field) => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(field);
  });

  it("refuses non-JSON bodies, wrong content types, oversized and empty bodies, creating nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const notJson = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: "{nope",
      headers: { "content-type": "application/json" },
    });
    expect([notJson.status, notJson.body.code]).toEqual([400, "bad_input"]);
    const wrongType = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: JSON.stringify({ name: "x" }),
      headers: { "content-type": "text/plain" },
    });
    expect([wrongType.status, wrongType.body.code]).toEqual([400, "bad_input"]);
    const big = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "x", description: "y".repeat(1024 * 1024 + 10) },
    });
    expect([big.status, big.body.code]).toEqual([400, "bad_input"]);
    const empty = await request<ErrorBody>("POST", "/v1/projects", { key: owner.key });
    expect([empty.status, empty.body.code]).toEqual([400, "bad_input"]);
    const list = await request<ProjectPage>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toEqual([]);
  });

  it("needs org owner or admin: a member is 403 unauthorized, even a project owner elsewhere", async () => {
    const { org, owner, project } = await setup();
    const admin = await createCaller(org, "admin");
    const member = await projectCaller(org, owner, project, "owner");
    const byAdmin = await request<ProjectBody>("POST", "/v1/projects", {
      key: admin.key,
      body: { name: unique("p") },
    });
    expect(byAdmin.status).toBe(201);
    const res = await request<ErrorBody>("POST", "/v1/projects", { key: member.key, body: { name: "p" } });
    expect([res.status, res.body.code]).toEqual([403, "unauthorized"]);
  });

  runCommonRouteTests(
    "POST /v1/projects",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "POST", path: "/v1/projects", body: { name: unique("p") }, caller: owner };
    },
    { otherOrgStatus: 201 },
  );
});

describe("GET /v1/projects/{id}", () => {
  it("reads a project; ids in any accepted form, malformed ones are 400", async () => {
    const { owner, project } = await setup();
    const res = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(project);
    for (const id of ["0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c", "a".repeat(32), "1111111111111111111111"]) {
      const missing = await request<ErrorBody>("GET", `/v1/projects/${id}`, { key: owner.key });
      expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    }
    for (const id of ["nope!", "0OIl111111111111111111", "A".repeat(32)]) {
      const bad = await request<ErrorBody>("GET", `/v1/projects/${id}`, { key: owner.key });
      expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
      expect(bad.body.cause?.map((c) => c.path)).toEqual(["project_id"]);
    }
  });

  it("visibility: org owner/admin and project members see it; other org members get 404", async () => {
    const { org, owner, project } = await setup();
    const admin = await createCaller(org, "admin");
    const outsider = await projectCaller(org, owner, project, null);
    const viewer = await projectCaller(org, owner, project, "viewer");
    const contributor = await projectCaller(org, owner, project, "contributor");
    for (const caller of [owner, admin, viewer, contributor]) {
      const res = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: caller.key });
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(project.id);
    }
    const hidden = await request<ErrorBody>("GET", `/v1/projects/${project.id}`, { key: outsider.key });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("GET /v1/projects/{id}", async () => {
    const { owner, project } = await setup();
    return { method: "GET", path: `/v1/projects/${project.id}`, caller: owner };
  });
});

describe("PUT /v1/projects/{id}", () => {
  it("replaces the whole record: omitted optional fields become null", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner, {
      description: "old",
      icon: "icon:box",
      repo_id: "7Hq3VnT5m2WcXbQ9pLk4Rz",
    });
    const env2 = await createEnvironment(project.id, "staging");
    const res = await request<ProjectBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { name: "renamed", default_environment_id: env2.id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...project,
      name: "renamed",
      default_environment_id: env2.id,
      description: null,
      icon: null,
      repo_id: null,
      updated_at: expect.stringMatching(TS),
    });
    expect(res.body.updated_at >= res.body.created_at).toBe(true);
    const read = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
  });

  it("a full body with unchanged values is accepted and changes nothing but updated_at", async () => {
    const { owner } = await createOrgWithOwner();
    const project = (await createProject(owner, { description: "d", icon: "emoji:x" })) as ProjectBody;
    const res = await request<ProjectBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: {
        name: project.name,
        default_environment_id: project.default_environment_id,
        description: project.description,
        icon: project.icon,
        repo_id: project.repo_id,
      },
    });
    expect(res.status).toBe(200);
    expect({ ...res.body, updated_at: project.updated_at }).toEqual(project);
  });

  it("refuses an environment of another project, and missing or read-only fields; changes nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const a = await createProject(owner);
    const b = await createProject(owner);
    const res = await request<ErrorBody>("PUT", `/v1/projects/${a.id}`, {
      key: owner.key,
      body: { name: "x", default_environment_id: b.default_environment_id },
    });
    expect(res.status).toBe(400);
    expect(res.body.cause?.map((c) => c.path)).toEqual(["default_environment_id"]);
    for (const [body, path] of [
      [{ name: "x" }, "default_environment_id"],
      [{ default_environment_id: a.default_environment_id }, "name"],
      [
        { name: "x", default_environment_id: a.default_environment_id, org_id: "1111111111111111111111" },
        "org_id",
      ],
      [{ name: "x", default_environment_id: "1111111111111111111111" }, "default_environment_id"],
    ] as const) {
      const bad = await request<ErrorBody>("PUT", `/v1/projects/${a.id}`, { key: owner.key, body });
      expect(bad.status).toBe(400);
      expect(bad.body.cause?.map((c) => c.path)).toEqual([path]);
    }
    const unchanged = await request<ProjectBody>("GET", `/v1/projects/${a.id}`, { key: owner.key });
    expect(unchanged.body).toEqual(a);
  });

  it("409 on a name taken by another project of the organization; its own name in another case is fine", async () => {
    const { owner } = await createOrgWithOwner();
    const a = await createProject(owner, { name: "alpha" });
    await createProject(owner, { name: "beta" });
    const res = await request<ErrorBody>("PUT", `/v1/projects/${a.id}`, {
      key: owner.key,
      body: { name: "BETA", default_environment_id: a.default_environment_id },
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    const same = await request<ProjectBody>("PUT", `/v1/projects/${a.id}`, {
      key: owner.key,
      body: { name: "ALPHA", default_environment_id: a.default_environment_id },
    });
    expect(same.status).toBe(200);
    expect(same.body.name).toBe("ALPHA");
  });

  runCommonRouteTests("PUT /v1/projects/{id}", async () => {
    const { owner, project } = await setup();
    return {
      method: "PUT",
      path: `/v1/projects/${project.id}`,
      body: { name: unique("p"), default_environment_id: project.default_environment_id },
      caller: owner,
    };
  });
});

describe("DELETE /v1/projects/{id}", () => {
  it("deletes the project and everything inside it; it is then 404", async () => {
    const { org, owner, project } = await setup();
    const member = await projectCaller(org, owner, project, "viewer");
    const staging = await createEnvironment(project.id);
    await createComponent(staging.id);
    await createStack(staging.id);
    const res = await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    for (const table of ["environments", "components", "stacks", "project_members"]) {
      const left = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE project_id = ?`)
        .bind(project.id)
        .first<{ n: number }>();
      expect(left?.n, table).toBe(0);
    }
    expect((await request("GET", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(404);
    expect((await request("GET", `/v1/projects/${project.id}`, { key: member.key })).status).toBe(404);
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(404);
  });

  runCommonRouteTests("DELETE /v1/projects/{id}", async () => {
    const { owner, project } = await setup();
    return { method: "DELETE", path: `/v1/projects/${project.id}`, caller: owner };
  });
});

describe("PATCH /v1/projects/{id}/disconnect", () => {
  it("connected → disconnecting (204), then 409 while not connected", async () => {
    const { owner, project } = await setup();
    const res = await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    const after = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(["disconnecting", "disconnected"]).toContain(after.body.connection_status);
    const again = await request<ErrorBody>("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
    });
    expect([again.status, again.body.code]).toEqual([409, "conflict"]);
  });

  runCommonRouteTests("PATCH /v1/projects/{id}/disconnect", async () => {
    const { owner, project } = await setup();
    return { method: "PATCH", path: `/v1/projects/${project.id}/disconnect`, caller: owner };
  });
});

describe("who may change a project", () => {
  const changes = (project: Project) =>
    [
      [
        "PUT",
        `/v1/projects/${project.id}`,
        { name: unique("p"), default_environment_id: project.default_environment_id },
      ],
      ["PATCH", `/v1/projects/${project.id}/disconnect`, undefined],
      ["DELETE", `/v1/projects/${project.id}`, undefined],
    ] as const;

  it("viewers and contributors get 403 forbidden; outsiders 404; nothing changes", async () => {
    const { org, owner, project } = await setup();
    const viewer = await projectCaller(org, owner, project, "viewer");
    const contributor = await projectCaller(org, owner, project, "contributor");
    const outsider = await projectCaller(org, owner, project, null);
    for (const [method, path, body] of changes(project)) {
      for (const caller of [viewer, contributor]) {
        const res = await request<ErrorBody>(method, path, { key: caller.key, body });
        expect([res.status, res.body.code], `${method} ${caller.accountId}`).toEqual([403, "forbidden"]);
      }
      const hidden = await request<ErrorBody>(method, path, { key: outsider.key, body });
      expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
    }
    const unchanged = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(unchanged.body).toEqual(project);
  });

  it("a project owner who is a plain org member, and an org admin, may change it", async () => {
    for (const who of ["project_owner", "org_admin"] as const) {
      const { org, owner, project } = await setup();
      const caller =
        who === "org_admin"
          ? await createCaller(org, "admin")
          : await projectCaller(org, owner, project, "owner");
      for (const [method, path, body] of changes(project)) {
        const res = await request(method, path, { key: caller.key, body });
        expect(res.status, `${who} ${method} ${path}`).toBe(method === "PUT" ? 200 : 204);
      }
    }
  });
});

describe("lists", () => {
  it("GET /v1/projects: org owner and admin see all, a member only its projects", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const p1 = await createProject(owner);
    const p2 = await createProject(owner);
    for (const caller of [owner, admin]) {
      const all = await request<ProjectPage>("GET", "/v1/projects", { key: caller.key });
      expect(all.body.data.map((p) => p.id)).toEqual([p2.id, p1.id]);
      expect(all.body.has_more).toBe(false);
      expect("next_page" in all.body).toBe(false);
    }
    const none = await request<ProjectPage>("GET", "/v1/projects", { key: member.key });
    expect(none.body).toEqual({ data: [], has_more: false });
    await addProjectMember(owner, p1.id, member, "viewer");
    const mine = await request<ProjectPage>("GET", "/v1/projects", { key: member.key });
    expect(mine.body.data).toEqual([p1]);
  });

  it("GET /v1/orgs/{org_id}/projects: own org only, same visibility", async () => {
    const { org, owner } = await createOrgWithOwner();
    const other = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    await createProject(owner);
    await createProject(other.owner);
    const mine = await request<ProjectPage>("GET", `/v1/orgs/${org.id}/projects`, { key: owner.key });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toHaveLength(2);
    await addProjectMember(owner, project.id, member, "contributor");
    const asMember = await request<ProjectPage>("GET", `/v1/orgs/${org.id}/projects`, { key: member.key });
    expect(asMember.body.data).toEqual([project]);
    for (const orgId of [other.org.id, "1111111111111111111111"]) {
      const theirs = await request<ErrorBody>("GET", `/v1/orgs/${orgId}/projects`, { key: owner.key });
      expect([theirs.status, theirs.body.code]).toEqual([404, "not_found"]);
    }
    const bad = await request<ErrorBody>("GET", "/v1/orgs/nope/projects", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests(
    "GET /v1/projects",
    async () => {
      const { owner } = await setup();
      return { method: "GET", path: "/v1/projects", caller: owner };
    },
    { otherOrgStatus: 200 },
  );

  runCommonRouteTests("GET /v1/orgs/{org_id}/projects", async () => {
    const { org, owner } = await setup();
    return { method: "GET", path: `/v1/orgs/${org.id}/projects`, caller: owner };
  });
});
