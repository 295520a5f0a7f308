import { expect } from "vitest";
import type { VariableRecord } from "../../src/schemas/variable";
import { type ApiResponse, request } from "./api";
import type { ErrorBody } from "./expect";
import { type Caller, createComponent, createOrgWithOwner, createProject, unique } from "./factories";

export type VariableBody = VariableRecord;
export type ListBody = { data: VariableBody[]; has_more: boolean; next_page?: string };

export const RECORD_KEYS = [
  "component_id",
  "created_at",
  "environment_id",
  "id",
  "name",
  "resource_id",
  "type",
  "updated_at",
];

/** An organization, a project, its default environment and one component in it. */
export async function setup() {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const component = await createComponent(environmentId);
  return { org, owner, project, environmentId, componentId: component.id };
}

export const componentPath = (id: string) => `/v1/components/${id}/variables`;
export const environmentPath = (id: string) => `/v1/environments/${id}/variables`;

export async function createVariable(
  caller: Caller,
  parentPath: string,
  body: { name?: string; type?: string; value?: string } = {},
): Promise<VariableBody> {
  const res = await request<VariableBody>("POST", parentPath, {
    key: caller.key,
    body: { name: unique("V").replace(/-/g, "_"), type: "secret", value: "v", ...body },
  });
  if (res.status !== 201) throw new Error(`create variable → ${res.status} ${res.raw}`);
  return res.body;
}

export async function reveal(caller: Caller, id: string): Promise<ApiResponse<{ value: string }>> {
  return request<{ value: string }>("GET", `/v1/variables/${id}/value`, { key: caller.key });
}

/** The real app and runtime, with the Worker's bindings overridden. */
export async function callApp(
  bindings: Partial<Env> & Record<string, unknown>,
  method: string,
  path: string,
  key: string,
  body?: unknown,
) {
  const res = await request(method, path, { key, body, bindings });
  return { status: res.status, raw: res.raw };
}

/** A random 32-byte VARIABLES_KEY, base64. */
export function randomKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}

/** Create bodies each variable create refuses, and the field its `cause` names. */
export const INVALID_BODIES: Array<[Record<string, unknown>, string]> = [
  [{ type: "secret", value: "x" }, "name"],
  [{ name: "", type: "secret", value: "x" }, "name"],
  [{ name: "1ABC", type: "secret", value: "x" }, "name"],
  [{ name: "A-B", type: "secret", value: "x" }, "name"],
  [{ name: "ÄPI", type: "secret", value: "x" }, "name"],
  [{ name: "A".repeat(256), type: "secret", value: "x" }, "name"],
  [{ name: "A", value: "x" }, "type"],
  [{ name: "A", type: "plain", value: "x" }, "type"],
  [{ name: "A", type: "secret" }, "value"],
  [{ name: "A", type: "secret", value: 5 }, "value"],
  [{ name: "A", type: "secret", value: null }, "value"],
  [{ name: "A", type: "secret", value: "x", extra: true }, "extra"],
];

/** A create of `body` under `parentPath` is 400 bad_input naming `field`, and the list stays empty. */
export async function expectCreateRefused(
  owner: Caller,
  parentPath: string,
  body: Record<string, unknown>,
  field: string,
) {
  const res = await request<ErrorBody>("POST", parentPath, { key: owner.key, body });
  expect(res.status).toBe(400);
  expect(res.body.code).toBe("bad_input");
  expect(res.body.cause?.map((c) => c.path)).toContain(field);
  const list = await request<ListBody>("GET", parentPath, { key: owner.key });
  expect(list.body.data).toEqual([]);
}

/** Six concurrent creates of one name under `parentPath`: one 201, five 409, one variable. */
export async function expectOneOfConcurrentCreates(owner: Caller, parentPath: string) {
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      request<ErrorBody>("POST", parentPath, {
        key: owner.key,
        body: { name: "RACE", type: i % 2 ? "secret" : "string", value: `v${i}` },
      }),
    ),
  );
  expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  const list = await request<ListBody>("GET", parentPath, { key: owner.key });
  expect(list.body.data.map((v) => v.name)).toEqual(["RACE"]);
}

/** `setup()`'s world with a variable in its environment and one in its component. */
export async function variablesInScopes() {
  const world = await setup();
  const envVar = await createVariable(world.owner, environmentPath(world.environmentId), {
    name: "ENV_ONLY",
  });
  const compVar = await createVariable(world.owner, componentPath(world.componentId), { name: "COMP_ONLY" });
  return { ...world, envVar, compVar };
}

/** runCommonRouteTests' setup for a variable create under the parent `pathOf` names in `setup()`'s world. */
export const createRoute = (pathOf: (world: Awaited<ReturnType<typeof setup>>) => string) => async () => {
  const world = await setup();
  return {
    method: "POST",
    path: pathOf(world),
    body: { name: "A", type: "secret", value: "x" },
    caller: world.owner,
  };
};
