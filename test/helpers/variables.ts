import type { VariableRecord } from "../../src/schemas/variable";
import { type ApiResponse, request } from "./api";
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
