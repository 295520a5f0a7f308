/** getResource: GET /v1/resources/{id} (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute } from "../../helpers/engine";
import { type ErrorBody, TS } from "../../helpers/expect";
import {
  addProjectMember,
  createCaller,
  createProjectWithStack,
  createResource,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Resource = StackResourceRecord;

describe("GET /v1/resources/{id}", () => {
  it("reads the record the engine created", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createResource(stack.id, { status: "create_in_progress" });
    expect(created).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      stack_id: stack.id,
      environment_id: environmentId,
      template_id: stack.template_id,
      resource_type: "AWS::S3::Bucket",
      physical_id: created.physical_id,
      status: "create_in_progress",
      status_reason: null,
      timestamp: expect.stringMatching(TS),
      created_at: created.timestamp,
      updated_at: created.timestamp,
    });
    const res = await request<Resource>("GET", `/v1/resources/${created.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it("an unknown resource is 404", async () => {
    const { owner, stack } = await createProjectWithStack();
    await createResource(stack.id);
    const res = await request<ErrorBody>("GET", `/v1/resources/${"a".repeat(32)}`, { key: owner.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
  });

  it("a malformed id is 400 bad_input naming the parameter", async () => {
    const { owner } = await createProjectWithStack();
    const bad = await request<ErrorBody>("GET", "/v1/resources/nope!", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    expect(bad.body.cause?.map((c) => c.path)).toContain("id");
  });

  it("a project viewer reads; an org member outside the project gets 404", async () => {
    const { org, owner, project, stack } = await createProjectWithStack();
    const viewer = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const resource = await createResource(stack.id);
    expect((await request("GET", `/v1/resources/${resource.id}`, { key: viewer.key })).status).toBe(200);
    const hidden = await request<ErrorBody>("GET", `/v1/resources/${resource.id}`, { key: outsider.key });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests(
    "GET /v1/resources/{id}",
    resourceRoute((_, r) => `/v1/resources/${r.id}`),
  );
});
