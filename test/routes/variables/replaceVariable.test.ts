/** replaceVariable. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOrgWithOwner, createProject } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import {
  componentPath,
  createVariable,
  environmentPath,
  reveal,
  setup,
  type VariableBody,
} from "../../helpers/variables";

describe("PUT /v1/variables/{id}", () => {
  it("replaces name, type and value; keeps id, scope and created_at", async () => {
    const { owner, project, environmentId, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId), { name: "OLD", value: "old" });
    for (const [type, value] of [
      ["string", "plain now"],
      ["secure_string", "secure now"],
      ["secret", "secret again"],
    ] as const) {
      const res = await request<VariableBody>("PUT", `/v1/variables/${variable.id}`, {
        key: owner.key,
        body: { name: `NEW_${type}`, type, value },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: variable.id,
        name: `NEW_${type}`,
        type,
        environment_id: environmentId,
        component_id: componentId,
        resource_id: `/${project.id}/${environmentId}/${componentId}/NEW_${type}`,
        created_at: variable.created_at,
      });
      expect(res.body.updated_at >= variable.updated_at).toBe(true);
      expect(res.raw).not.toContain(value);
      expect((await reveal(owner, variable.id)).body.value).toBe(value);
    }
    // The old name is free again.
    await createVariable(owner, componentPath(componentId), { name: "OLD" });
  });

  it("is a full replace: every field is required; bad input changes nothing", async () => {
    const { owner, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId), { value: "kept" });
    for (const [body, field] of [
      [{ name: "X", type: "secret" }, "value"],
      [{ name: "X", value: "y" }, "type"],
      [{ type: "secret", value: "y" }, "name"],
      [{ name: "X", type: "secret", value: "y", component_id: "1111111111111111111111" }, "component_id"],
      [{ name: "X", type: "secret", value: "€".repeat(21_846) }, "value"],
    ] as const) {
      const res = await request<ErrorBody>("PUT", `/v1/variables/${variable.id}`, { key: owner.key, body });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      expect(res.body.cause?.map((c) => c.path)).toContain(field);
    }
    expect((await request("GET", `/v1/variables/${variable.id}`, { key: owner.key })).body).toEqual(variable);
    expect((await reveal(owner, variable.id)).body.value).toBe("kept");
    const missing = await request<ErrorBody>("PUT", `/v1/variables/${"a".repeat(32)}`, {
      key: owner.key,
      body: { name: "X", type: "secret", value: "y" },
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests("PUT /v1/variables/{id}", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return {
      method: "PUT",
      path: `/v1/variables/${variable.id}`,
      body: { name: "A", type: "secret", value: "x" },
      caller: owner,
    };
  });
});

describe("names are unique per scope", () => {
  it("a rename onto a taken name is 409 and changes nothing", async () => {
    const { owner, componentId } = await setup();
    const a = await createVariable(owner, componentPath(componentId), { name: "A", value: "a-value" });
    await createVariable(owner, componentPath(componentId), { name: "B" });
    const res = await request<ErrorBody>("PUT", `/v1/variables/${a.id}`, {
      key: owner.key,
      body: { name: "B", type: "secret", value: "changed" },
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    expect((await request("GET", `/v1/variables/${a.id}`, { key: owner.key })).body).toEqual(a);
    expect((await reveal(owner, a.id)).body.value).toBe("a-value");
  });
});

describe("a PUT carries the full representation (SPEC.md)", () => {
  type Body = Record<string, unknown>;

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
