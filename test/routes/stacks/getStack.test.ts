/**
 * getStack: GET /v1/stacks/{stack_id} (API_CONTRACT §23: viewer, `environments:read`; the record
 * `{ id, environment_id, name, template_id, created_at }` with §12's strong ETag).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  expectMissingScope,
  expectPublished,
  expectRecordEtag,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  STACK_FIELDS,
  type StackBody,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import { createCaller, createOwnedProject, createStack, projectRoleCallers } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const path = (id: string) => `/v1/stacks/${id}`;
const read = (key: string, id: string) => request<StackBody>("GET", path(id), { key });

async function withStack() {
  const w = await createOwnedProject();
  const stack = await createStack(w.project.default_environment_id, {
    name: "network",
    template_id: "vpc v2",
  });
  return { ...w, stack };
}

describe("GET /v1/stacks/{stack_id}", () => {
  it("answers exactly the record's fields, as the engine made it", async () => {
    const { owner, project, stack } = await withStack();
    const res = await read(owner.key, stack.id);
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(STACK_FIELDS);
    expect(res.body).toEqual({
      id: stack.id,
      environment_id: project.default_environment_id,
      name: "network",
      template_id: "vpc v2",
      created_at: expect.stringMatching(TS),
    });
    expect(res.body.created_at).toBe((stack as { created_at?: string }).created_at);
  });

  it("a stack made without a template_id reads the one it was given", async () => {
    const { owner, project } = await createOwnedProject();
    const stack = await createStack(project.default_environment_id, { name: "plain" });
    const res = await read(owner.key, stack.id);
    expect(res.body.template_id).toBe(stack.template_id);
    expect(res.body.template_id.length).toBeGreaterThan(0);
  });

  it("has a strong ETag, the same for every caller; If-None-Match with it or `*` is 304", async () => {
    const w = await withStack();
    const { viewer } = await projectRoleCallers(w);
    const etag = await expectRecordEtag(w.owner.key, path(w.stack.id));
    expect(await expectRecordEtag(viewer.key, path(w.stack.id))).toBe(etag);
  });

  it("viewers, contributors and org admins read; a non-member of the project is 404", async () => {
    const w = await withStack();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    for (const caller of [viewer, contributor, admin]) {
      expect((await read(caller.key, w.stack.id)).status).toBe(200);
    }
    expectError(await read(outsider.key, w.stack.id), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished("get", "/v1/stacks/{stack_id}", "getStack", "environments:read");
    const { owner, stack } = await withStack();
    expectMissingScope(
      await read(await keyWithout(owner, "environments:read"), stack.id),
      "environments:read",
    );
    expect((await read(await keyWith(owner, "environments:read"), stack.id)).status).toBe(200);
    expectError(await read(await keyForAnotherProject(owner), stack.id), 404, "not_found");
  });

  it("an unknown stack is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await read(owner.key, UNKNOWN_ID), 404, "not_found");
    expectError(await read(owner.key, "nope!"), 400, "bad_input", "stack_id");
  });

  runCommonRouteTests("GET /v1/stacks/{stack_id}", async () => {
    const { owner, stack } = await withStack();
    return { method: "GET", path: path(stack.id), caller: owner };
  });
});
