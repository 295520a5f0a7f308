/**
 * Variables in the authorization matrix (API_CONTRACT §5): records and lists are `read`
 * (viewer+); create, replace, delete and reading a value are `write` (contributor+). Variable
 * sets (§18): versions are `read`; a change, a restore and an export (a reveal) are `write`.
 */
import { request } from "../../../helpers/api";
import { createComponent, unique } from "../../../helpers/factories";
import type { MatrixRoute, World } from "../types";

/** One component per world, made through the internal API (not rate-limited). */
const componentOf = new WeakMap<World, Promise<string>>();
function component(world: World): Promise<string> {
  let id = componentOf.get(world);
  if (!id) {
    id = createComponent(world.project.default_environment_id).then((c) => c.id);
    componentOf.set(world, id);
  }
  return id;
}

const variableName = () => unique("V").replace(/-/g, "_");

/** A `secret` variable made by the org owner, so that revealing it really decrypts. */
async function newVariable(world: World): Promise<string> {
  const res = await request<{ id: string }>("POST", `/v1/components/${await component(world)}/variables`, {
    key: world.owner.key,
    body: { name: variableName(), type: "secret", value: "matrix-value" },
  });
  if (res.status !== 201) throw new Error(`create variable → ${res.status} ${res.raw}`);
  return res.body.id;
}

/** Read-only cells share one variable per world: fewer requests on the owner's rate-limit budget. */
const sharedOf = new WeakMap<World, Promise<string>>();
function sharedVariable(world: World): Promise<string> {
  let id = sharedOf.get(world);
  if (!id) {
    id = newVariable(world);
    sharedOf.set(world, id);
  }
  return id;
}

const writeBody = () => ({ name: variableName(), type: "secure_string", value: "matrix-write" });

export const routes: MatrixRoute[] = [
  {
    name: "GET /v1/variables/{variable_id}",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/variables/${await sharedVariable(world)}` }),
  },
  {
    name: "GET /v1/variables/{variable_id}/value",
    action: "write",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/variables/${await sharedVariable(world)}/value` }),
  },
  {
    name: "PUT /v1/variables/{variable_id}",
    action: "write",
    success: 200,
    prepare: async (world) => ({
      method: "PUT",
      path: `/v1/variables/${await newVariable(world)}`,
      body: writeBody(),
    }),
  },
  {
    name: "DELETE /v1/variables/{variable_id}",
    action: "write",
    success: 204,
    prepare: async (world) => ({ method: "DELETE", path: `/v1/variables/${await newVariable(world)}` }),
  },
  {
    name: "GET /v1/components/{component_id}/variables",
    action: "read",
    success: 200,
    prepare: async (world) => ({ method: "GET", path: `/v1/components/${await component(world)}/variables` }),
  },
  {
    name: "POST /v1/components/{component_id}/variables",
    action: "write",
    success: 201,
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/components/${await component(world)}/variables`,
      body: writeBody(),
    }),
  },
  {
    name: "GET /v1/environments/{environment_id}/variables",
    action: "read",
    success: 200,
    prepare: async (world) => ({
      method: "GET",
      path: `/v1/environments/${world.project.default_environment_id}/variables`,
    }),
  },
  {
    name: "POST /v1/environments/{environment_id}/variables",
    action: "write",
    success: 201,
    prepare: async (world) => ({
      method: "POST",
      path: `/v1/environments/${world.project.default_environment_id}/variables`,
      body: writeBody(),
    }),
  },
];

/** A scope's variables path (the world's environment, or its component) with a version 1 to read and restore. */
const versioned = new WeakMap<World, Promise<void>>();
async function scopePath(world: World, kind: "environments" | "components"): Promise<string> {
  const path =
    kind === "environments"
      ? `/v1/environments/${world.project.default_environment_id}/variables`
      : `/v1/components/${await component(world)}/variables`;
  let made = versioned.get(world);
  if (!made) {
    made = Promise.all(
      [
        `/v1/environments/${world.project.default_environment_id}/variables`,
        `/v1/components/${await component(world)}/variables`,
      ].map(async (base) => {
        const res = await request("PATCH", base, {
          key: world.owner.key,
          body: { variables: { MATRIX_VERSIONED: { type: "secret", value: "v" } } },
        });
        if (res.status !== 200) throw new Error(`version the scope → ${res.status} ${res.raw}`);
      }),
    ).then(() => undefined);
    versioned.set(world, made);
  }
  await made;
  return path;
}

for (const [kind, param] of [
  ["environments", "environment_id"],
  ["components", "component_id"],
] as const) {
  const scope = (world: World) => scopePath(world, kind);
  routes.push(
    {
      name: `PATCH /v1/${kind}/{${param}}/variables`,
      action: "write",
      success: 200,
      prepare: async (world) => ({
        method: "PATCH",
        path: await scope(world),
        body: { variables: { [variableName()]: { type: "string", value: "matrix-set" } } },
      }),
    },
    {
      name: `GET /v1/${kind}/{${param}}/variables/versions`,
      action: "read",
      success: 200,
      prepare: async (world) => ({ method: "GET", path: `${await scope(world)}/versions` }),
    },
    {
      name: `GET /v1/${kind}/{${param}}/variables/versions/{version}`,
      action: "read",
      success: 200,
      prepare: async (world) => ({ method: "GET", path: `${await scope(world)}/versions/1` }),
    },
    {
      name: `POST /v1/${kind}/{${param}}/variables/versions/{version}/restore`,
      action: "write",
      success: 200,
      prepare: async (world) => ({
        method: "POST",
        path: `${await scope(world)}/versions/1/restore`,
        body: { dry_run: true },
      }),
    },
    {
      name: `GET /v1/${kind}/{${param}}/variables/export`,
      action: "write",
      success: 200,
      prepare: async (world) => ({ method: "GET", path: `${await scope(world)}/export` }),
      // A reveal (`variables:reveal`), which `*:read` scopes do not hold (API_CONTRACT §15).
      expect: { read_scopes_key: 403 },
    },
  );
}
