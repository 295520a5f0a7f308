/** replaceProject. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import {
  createEnvironment,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
  unique,
} from "../../helpers/factories";
import type { ProjectBody } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";

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
    const read = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
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
    const { owner, project } = await createOwnedProject();
    return {
      method: "PUT",
      path: `/v1/projects/${project.id}`,
      body: { name: unique("p"), default_environment_id: project.default_environment_id },
      caller: owner,
    };
  });
});

describe("a PUT carries the full representation (SPEC.md)", () => {
  type Body = Record<string, unknown>;

  it("accepts the record as read, with changes; read-only fields change nothing", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const read = await request<Body>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    const sent = {
      ...read.body,
      name: "renamed",
      connection_status: "disconnected",
      created_at: "2000-01-01T00:00:00.000Z",
    };
    const res = await request<Body>("PUT", `/v1/projects/${project.id}`, { key: owner.key, body: sent });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: project.id, name: "renamed", connection_status: "connected" });
    expect(res.body.created_at).toBe(read.body.created_at);
    // Ignored fields are taken in any form: the same instant written another way, an offset.
    const other = await request<Body>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: {
        ...res.body,
        created_at: String(read.body.created_at).replace(/\.\d{3}Z$/, "+00:00"),
        updated_at: "yesterday",
      },
    });
    expect([other.status, other.body.created_at], other.raw).toEqual([200, read.body.created_at]);
  });

  it("refuses an echoed id or org_id of another record, and still refuses unknown fields", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const other = await createProject(owner);
    const read = (await request<Body>("GET", `/v1/projects/${project.id}`, { key: owner.key })).body;
    const wrongId = await request<ErrorBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { ...read, id: other.id },
    });
    expect([wrongId.status, wrongId.body.code, wrongId.body.cause?.map((c) => c.path)]).toEqual([
      400,
      "bad_input",
      ["id"],
    ]);
    const stranger = await createOrgWithOwner();
    const wrongOrg = await request<ErrorBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { ...read, org_id: stranger.org.id },
    });
    expect(wrongOrg.body.cause?.map((c) => c.path)).toEqual(["org_id"]);
    const unknown = await request<ErrorBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { ...read, colour: "red" },
    });
    expect([unknown.status, unknown.body.cause?.map((c) => c.path)]).toEqual([400, ["colour"]]);
    expect((await request<Body>("GET", `/v1/projects/${project.id}`, { key: owner.key })).body).toEqual(read);
  });
});
