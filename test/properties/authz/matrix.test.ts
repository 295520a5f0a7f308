/// <reference types="vite/client" />
/**
 * The authorization matrix (API_CONTRACT §5): every project-scoped route × every actor.
 *
 * Rows come from every file in ./rows/ (each exports `routes: MatrixRoute[]`, and may
 * export `unscoped: UnscopedRoute[]`), collected by Vite's import.meta.glob, which the
 * Workers pool applies like any Vite transform: an area adds its routes by adding a
 * file, never by editing this one. Each rows file gets its own World, built once.
 *
 * The expected cell is derived here from the contract, not from src/services/access.ts,
 * so the matrix checks the implementation instead of restating it.
 */

import { beforeAll, describe, expect, it } from "vitest";
import type { ProjectRole } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import { captureLogs } from "../../helpers/logs";
import { operations, pathTemplateOf } from "../../helpers/openapi";
import { ACTOR_ROLE, buildWorld } from "./harness";
import { ACTORS, type Actor, type MatrixRoute, type UnscopedRoute, type World } from "./types";

type RowsModule = { routes?: MatrixRoute[]; unscoped?: UnscopedRoute[] };

const modules = import.meta.glob<RowsModule>("./rows/*.ts", { eager: true });
const files = Object.keys(modules).sort();

const NEEDED: Record<MatrixRoute["action"], ProjectRole> = {
  read: "viewer",
  write: "contributor",
  manage: "owner",
};
const RANK: Record<ProjectRole, number> = { viewer: 1, contributor: 2, owner: 3 };

/** The status (and, where the rule fixes it, the code) of one cell. */
function expected(route: MatrixRoute, actor: Actor): { status: number; code?: string } {
  const override = route.expect?.[actor];
  if (override !== undefined) return { status: override };
  // API_CONTRACT §15: only reads, and not the reveal (`variables:reveal`), are within `*:read`;
  // the scope is checked before anything is read, so this holds whatever the project role.
  if (actor === "read_scopes_key" && (!/^GET\s/i.test(route.name) || /\/value$/.test(route.name))) {
    return { status: 403, code: "forbidden" };
  }
  const role = ACTOR_ROLE[actor];
  if (!role) return { status: 404, code: "not_found" };
  if (RANK[role] < RANK[NEEDED[route.action]]) return { status: 403, code: "forbidden" };
  return { status: route.success };
}

/** "put /v1/projects/{id}" and "PUT /v1/projects/{project_id}" name the same operation. */
const operationKey = (name: string) => {
  const [method = "", path = ""] = name.trim().split(/\s+/);
  return `${method.toUpperCase()} ${path.replace(/{[^}]+}/g, "{}")}`;
};

// The integration rows' test sends and redeliveries go to a URL the send-time check refuses: the
// queue logs each failed delivery as a warning by design, in the background while the matrix runs.
captureLogs("warn", "all");

describe("the matrix itself", () => {
  it("collects the rows files of every area", () => {
    expect(files).toEqual(expect.arrayContaining(["./rows/members.ts", "./rows/projects.ts"]));
    for (const file of files) {
      const { routes, unscoped } = modules[file] ?? {};
      expect(Array.isArray(routes) || Array.isArray(unscoped), `${file} exports routes`).toBe(true);
    }
  });

  it("every /v1 operation of /openapi.json is a row or declared unscoped, and every row is an operation", async () => {
    const rows = files.flatMap((file) => (modules[file]?.routes ?? []).map((r) => operationKey(r.name)));
    const unscoped = files.flatMap((file) =>
      (modules[file]?.unscoped ?? []).map((r) => operationKey(r.name)),
    );
    expect(
      rows.filter((key, i) => rows.indexOf(key) !== i),
      "routes listed twice",
    ).toEqual([]);
    const documented = (await operations())
      .filter((op) => op.path.startsWith("/v1/"))
      .map((op) => operationKey(`${op.method} ${op.path}`));
    const listed = new Set([...rows, ...unscoped]);
    expect(
      documented.filter((key) => !listed.has(key)),
      "operations missing from test/properties/authz/rows",
    ).toEqual([]);
    expect(
      [...listed].filter((key) => !documented.includes(key)),
      "rows naming no operation",
    ).toEqual([]);
  });
});

for (const file of files) {
  const routes = modules[file]?.routes ?? [];
  if (routes.length === 0) continue;
  describe(file, () => {
    let world: World;
    beforeAll(async () => {
      world = await buildWorld();
    });

    for (const route of routes) {
      for (const actor of ACTORS) {
        const want = expected(route, actor);
        it(`${route.name} as ${actor} → ${want.status}`, async () => {
          const req = await route.prepare(world, actor);
          // The request must reach the operation the row names, not a neighbour.
          const template = await pathTemplateOf(req.method, req.path);
          expect(operationKey(`${req.method} ${template ?? req.path}`)).toBe(operationKey(route.name));
          const res = await request<{ code?: string }>(req.method, req.path, {
            key: world.actors[actor].key,
            body: req.body,
          });
          expect(res.status, `${route.name} as ${actor}: ${res.raw.slice(0, 300)}`).toBe(want.status);
          if (want.code) expect(res.body.code).toBe(want.code);
        });
      }
    }
  });
}
