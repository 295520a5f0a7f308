/**
 * getComponent: GET /v1/components/{component_id} (API_CONTRACT §23: viewer, `environments:read`;
 * the record `{ id, environment_id, name, created_at }` with §12's strong ETag).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  COMPONENT_FIELDS,
  type ComponentBody,
  expectMissingScope,
  expectPublished,
  expectRecordEtag,
  keyForAnotherProject,
  keyWith,
  keyWithout,
} from "../../helpers/environments";
import { expectError, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  createCaller,
  createComponent,
  createOwnedProject,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const path = (id: string) => `/v1/components/${id}`;
const read = (key: string, id: string) => request<ComponentBody>("GET", path(id), { key });

async function withComponent() {
  const w = await createOwnedProject();
  const component = await createComponent(w.project.default_environment_id, "checkout");
  return { ...w, component };
}

describe("GET /v1/components/{component_id}", () => {
  it("answers exactly the record's fields, as the engine made it", async () => {
    const { owner, project, component } = await withComponent();
    const res = await read(owner.key, component.id);
    expect(res.status, res.raw).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(COMPONENT_FIELDS);
    expect(res.body).toEqual({
      id: component.id,
      environment_id: project.default_environment_id,
      name: "checkout",
      created_at: expect.stringMatching(TS),
    });
    expect(res.body.created_at).toBe((component as { created_at?: string }).created_at);
  });

  it("has a strong ETag, the same for every caller; If-None-Match with it or `*` is 304", async () => {
    const w = await withComponent();
    const { viewer } = await projectRoleCallers(w);
    const etag = await expectRecordEtag(w.owner.key, path(w.component.id));
    expect(await expectRecordEtag(viewer.key, path(w.component.id))).toBe(etag);
  });

  it("viewers, contributors and org admins read; a non-member of the project is 404", async () => {
    const w = await withComponent();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const admin = await createCaller(w.org, "admin");
    for (const caller of [viewer, contributor, admin]) {
      expect((await read(caller.key, w.component.id)).status).toBe(200);
    }
    expectError(await read(outsider.key, w.component.id), 404, "not_found");
  });

  it("publishes x-required-scope environments:read; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished("get", "/v1/components/{component_id}", "getComponent", "environments:read");
    const { owner, component } = await withComponent();
    expectMissingScope(
      await read(await keyWithout(owner, "environments:read"), component.id),
      "environments:read",
    );
    expect((await read(await keyWith(owner, "environments:read"), component.id)).status).toBe(200);
    expectError(await read(await keyForAnotherProject(owner), component.id), 404, "not_found");
  });

  it("an unknown component is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await read(owner.key, UNKNOWN_ID), 404, "not_found");
    expectError(await read(owner.key, "nope!"), 400, "bad_input", "component_id");
  });

  runCommonRouteTests("GET /v1/components/{component_id}", async () => {
    const { owner, component } = await withComponent();
    return { method: "GET", path: path(component.id), caller: owner };
  });
});
