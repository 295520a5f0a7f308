/**
 * SPEC.md: "A PUT replaces the whole record: its body contains the full representation,
 * including fields that do not change." A record read with GET can be sent back with changes;
 * its read-only fields change nothing, identifying ones must match, unknown fields are still refused.
 */
import { describe, expect, it } from "vitest";
import { request } from "./helpers/api";
import type { ErrorBody } from "./helpers/expect";
import { addProjectMember, createCaller, createOrgWithOwner, createProject } from "./helpers/factories";

type Body = Record<string, unknown>;

describe("PUT /v1/projects/{id}", () => {
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

describe("PUT /v1/projects/{id}/members/{member_id}", () => {
  it("accepts the member record as read with a new role; a mismatched account_id is 400", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    await addProjectMember(owner, project.id, member, "viewer");
    const path = `/v1/projects/${project.id}/members/${member.accountId}`;
    const read = (await request<Body>("GET", path, { key: owner.key })).body;
    const res = await request<Body>("PUT", path, { key: owner.key, body: { ...read, role: "contributor" } });
    expect([res.status, res.body.role]).toEqual([200, "contributor"]);
    // The account's fields are read-only here: sent back in any form, they are ignored.
    const loose = await request<Body>("PUT", path, {
      key: owner.key,
      body: { ...read, role: "contributor", profile: {}, created_at: "2026-11-23T09:02:29Z", avatar: 7 },
    });
    expect([loose.status, loose.body.profile], loose.raw).toEqual([200, read.profile]);
    const wrong = await request<ErrorBody>("PUT", path, {
      key: owner.key,
      body: { ...read, role: "owner", account_id: owner.accountId },
    });
    expect([wrong.status, wrong.body.cause?.map((c) => c.path)]).toEqual([400, ["account_id"]]);
    expect((await request<Body>("GET", path, { key: owner.key })).body.role).toBe("contributor");
  });
});

describe("PUT /v1/variables/{id}", () => {
  it("accepts the record as read plus a value; a variable never moves scope", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const otherEnv = (await createProject(owner)).default_environment_id;
    const created = await request<Body>(
      "POST",
      `/v1/environments/${project.default_environment_id}/variables`,
      {
        key: owner.key,
        body: { name: "TOKEN", type: "secret", value: "one" },
      },
    );
    const path = `/v1/variables/${created.body.id}`;
    const read = (await request<Body>("GET", path, { key: owner.key })).body;
    const res = await request<Body>("PUT", path, {
      key: owner.key,
      body: { ...read, name: "TOKEN2", value: "two" },
    });
    expect([res.status, res.body.name, res.body.environment_id]).toEqual([
      200,
      "TOKEN2",
      project.default_environment_id,
    ]);
    const value = await request<Body>("GET", `${path}/value`, { key: owner.key });
    expect(value.body).toEqual({ value: "two" });
    // `resource_id` is a read-only string: any value is ignored.
    const echoed = await request<Body>("PUT", path, {
      key: owner.key,
      body: { ...read, name: "TOKEN2", value: "two", resource_id: "whatever" },
    });
    expect([echoed.status, echoed.body.resource_id], echoed.raw).toEqual([200, res.body.resource_id]);
    const moved = await request<ErrorBody>("PUT", path, {
      key: owner.key,
      body: { ...read, value: "three", environment_id: otherEnv },
    });
    expect([moved.status, moved.body.cause?.map((c) => c.path)]).toEqual([400, ["environment_id"]]);
    expect((await request<Body>("GET", `${path}/value`, { key: owner.key })).body).toEqual({ value: "two" });
  });
});
