/**
 * Environments under concurrent writes (API_CONTRACT §23), in the real runtime against real D1:
 *
 * - a DELETE of an environment racing a deployment started in it from the API: the delete is
 *   refused while a deployment of it is `queued` (409), and everything inside a deleted
 *   environment goes with it, so either the create lands first (201, and the delete is 409) or
 *   the delete does (204, and the create finds no environment: 404). Never a 500, never a
 *   deployment left without its environment;
 * - names unique in a project regardless of case "for every create and rename": of concurrent
 *   creates and renames to one name, exactly one holds it and every other is 409;
 * - §17 for the two new public creates: under a project deleted at the same moment, `404
 *   not_found`, never `500`, and nothing left behind.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { type ApiResponse, internal, request } from "../../helpers/api";
import { PATCH } from "../../helpers/engine";
import {
  deleteEnvironment,
  environmentNames,
  environmentPath,
  getEnvironment,
  patchEnvironment,
  postEnvironment,
  publicEnvironment,
  rowsIn,
} from "../../helpers/environments";
import type { ErrorBody } from "../../helpers/expect";
import {
  type Caller,
  createApiKey,
  createEnvironment,
  createOwnedProject,
  createStack,
} from "../../helpers/factories";
import { sleep } from "../../helpers/wait";

const ROUNDS = 6;
const AT_ONCE = 6;

const statuses = (responses: Array<{ status: number }>) =>
  responses.map((r) => r.status).sort((a, b) => a - b);

/** Deployments of a project whose environment does not exist (read straight from D1). */
async function orphanDeployments(projectId: string): Promise<number> {
  const row = await env.DB.prepare(
    `SELECT count(*) AS n FROM deployments AS d
     WHERE d.project_id = ? AND NOT EXISTS (SELECT 1 FROM environments AS e WHERE e.id = d.environment_id)`,
  )
    .bind(projectId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** The environments of a project whose name is `name` regardless of case. */
const holders = async (owner: Caller, projectId: string, name: string) =>
  (await environmentNames(owner, projectId)).filter((n) => n.toLowerCase() === name.toLowerCase());

/** Other keys of `owner`'s account: each has a limiter object of its own, so requests are not lined up by one. */
const keysOf = (owner: Caller, n: number) =>
  Promise.all(Array.from({ length: n }, async () => (await createApiKey(owner)).key));

describe("DELETE of an environment racing a deployment started in it", () => {
  it("either delete 204 and create 404 with no deployment left, or create 201 and delete 409; never 500", async () => {
    const { owner, project } = await createOwnedProject();
    const outcomes = { deleted: 0, deployed: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const places = [];
      for (let i = 0; i < AT_ONCE; i++) {
        const environment = await createEnvironment(project.id);
        await createStack(environment.id);
        const [deleter, starter] = await keysOf(owner, 2);
        places.push({ environmentId: environment.id, deleter: deleter ?? "", starter: starter ?? "" });
      }
      await Promise.all(
        places.map(async ({ environmentId, deleter, starter }, i) => {
          // One of the two starts 0–5 ms after the other, each way round, so that they land in every
          // order, the create's checks and its write included.
          const lag = (i + round) % 6;
          const createFirst = (i + round) % 2 === 0;
          const started = sleep(createFirst ? 0 : lag).then(() =>
            request<DeploymentRecord & ErrorBody>("POST", `${environmentPath(environmentId)}/deployments`, {
              key: starter,
              body: { data: { patch: PATCH } },
            }),
          );
          const deleted = sleep(createFirst ? lag : 0).then(() => deleteEnvironment(deleter, environmentId));
          const [created, removed] = await Promise.all([started, deleted]);
          const pair = `create ${created.status} ${created.raw} / delete ${removed.status} ${removed.raw}`;
          expect(created.status, pair).toBeLessThan(500);
          expect(removed.status, pair).toBeLessThan(500);
          if (removed.status === 204) {
            expect([created.status, created.body.code], pair).toEqual([404, "not_found"]);
            expect(await rowsIn("deployments", environmentId), pair).toBe(0);
            expect((await getEnvironment(owner, environmentId)).status).toBe(404);
            outcomes.deleted++;
          } else {
            expect([created.status, removed.status, removed.body.code], pair).toEqual([201, 409, "conflict"]);
            expect((await getEnvironment(owner, environmentId)).status).toBe(200);
            expect(created.body.environment_id).toBe(environmentId);
            const read = await request("GET", `/v1/deployments/${created.body.id}`, { key: owner.key });
            expect(read.status).toBe(200);
            outcomes.deployed++;
          }
        }),
      );
    }
    expect(outcomes.deleted + outcomes.deployed).toBe(ROUNDS * AT_ONCE);
    // Each way round happened (the one started first mostly wins), so both branches were checked.
    expect(outcomes.deleted).toBeGreaterThan(0);
    expect(outcomes.deployed).toBeGreaterThan(0);
    expect(await orphanDeployments(project.id)).toBe(0);
  });

  it("the environment vanishing inside the deployment's INSERT is 404 not_found, and nothing is left", async () => {
    const { owner, project } = await createOwnedProject();
    const environment = await createEnvironment(project.id);
    await createStack(environment.id);
    const trigger = `vanish_env_${environment.id}`;
    // Deletes the environment as the create's INSERT runs: the row then fails its foreign key.
    await env.DB.prepare(
      `CREATE TRIGGER "${trigger}" BEFORE INSERT ON deployments WHEN NEW.environment_id = '${environment.id}'
       BEGIN DELETE FROM environments WHERE id = '${environment.id}'; END`,
    ).run();
    let res: ApiResponse<ErrorBody>;
    try {
      res = await request<ErrorBody>("POST", `${environmentPath(environment.id)}/deployments`, {
        key: owner.key,
        body: { data: { patch: PATCH } },
      });
    } finally {
      await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
    }
    expect([res.status, res.body.code], res.raw).toEqual([404, "not_found"]);
    expect(await rowsIn("deployments", environment.id)).toBe(0);
    expect(await orphanDeployments(project.id)).toBe(0);
  });
});

describe("one name, written at the same moment", () => {
  it("a rename racing a create of the same name (another case): exactly one holds it, the other 409", async () => {
    const { owner, project } = await createOwnedProject();
    for (let round = 0; round < ROUNDS; round++) {
      const name = `target-${round}`;
      const renamed = await publicEnvironment(owner, project.id, { name: `source-${round}` });
      const [renamer, creator] = await keysOf(owner, 2);
      const [patch, post] = await Promise.all([
        patchEnvironment(renamer ?? "", renamed.id, { name: name.toUpperCase() }),
        sleep(round % 3).then(() => postEnvironment(creator ?? "", project.id, { name })),
      ]);
      const pair = `rename ${patch.status} ${patch.raw} / create ${post.status} ${post.raw}`;
      expect([patch.status, post.status].sort(), pair).toSatisfy(
        (s: number[]) => (s[0] === 200 && s[1] === 409) || (s[0] === 201 && s[1] === 409),
      );
      for (const r of [patch, post])
        if (r.status === 409) expect(r.body.cause?.map((c) => c.path)).toContain("name");
      expect(await holders(owner, project.id, name), pair).toHaveLength(1);
      // The refused rename left its environment as it was.
      if (patch.status === 409)
        expect((await getEnvironment(owner, renamed.id)).body.name).toBe(`source-${round}`);
    }
  });

  it("concurrent creates of one name in any case: one 201, every other 409 with cause name", async () => {
    const { owner, project } = await createOwnedProject();
    for (let round = 0; round < ROUNDS; round++) {
      const keys = await keysOf(owner, 4);
      const names = [`Gamma-${round}`, `gamma-${round}`, `GAMMA-${round}`, `gAmMa-${round}`];
      const results = await Promise.all(
        keys.map((key, i) => postEnvironment(key, project.id, { name: names[i] })),
      );
      expect(statuses(results), results.map((r) => r.raw).join("\n")).toEqual([201, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) {
        expect(r.body.cause?.map((c) => c.path)).toContain("name");
      }
      expect(await holders(owner, project.id, names[0] ?? "")).toHaveLength(1);
    }
  });

  it("concurrent renames of two environments to one name: one 200, the other 409", async () => {
    const { owner, project } = await createOwnedProject();
    for (let round = 0; round < ROUNDS; round++) {
      const a = await publicEnvironment(owner, project.id);
      const b = await publicEnvironment(owner, project.id);
      const [ka, kb] = await keysOf(owner, 2);
      const results = await Promise.all([
        patchEnvironment(ka ?? "", a.id, { name: `delta-${round}` }),
        patchEnvironment(kb ?? "", b.id, { name: `DELTA-${round}` }),
      ]);
      expect(statuses(results), results.map((r) => r.raw).join("\n")).toEqual([200, 409]);
      expect(await holders(owner, project.id, `delta-${round}`)).toHaveLength(1);
    }
  });

  it("the engine's create racing a public create of one name: one 201, the other 409", async () => {
    const { owner, project } = await createOwnedProject();
    for (let round = 0; round < ROUNDS; round++) {
      const name = `epsilon-${round}`;
      const results = await Promise.all([
        postEnvironment(owner, project.id, { name }),
        internal("POST", `/projects/${project.id}/environments`, { name: name.toUpperCase() }),
      ]);
      expect(statuses(results), results.map((r) => r.raw).join("\n")).toEqual([201, 409]);
      expect(await holders(owner, project.id, name)).toHaveLength(1);
    }
  });
});

describe("the public creates of part four under a project deleted at the same moment (§17)", () => {
  /** The rows of `table` in one project. */
  const inProject = async (table: string, projectId: string) =>
    (
      await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE project_id = ?`)
        .bind(projectId)
        .first<{ n: number }>()
    )?.n ?? 0;

  /** A project with a `source` environment holding a variable, and a stack in its default environment. */
  async function world() {
    const w = await createOwnedProject();
    const source = await createEnvironment(w.project.id, "source");
    const variable = await request("POST", `${environmentPath(source.id)}/variables`, {
      key: w.owner.key,
      body: { name: "TOKEN", type: "secret", value: "s3cret" },
    });
    expect(variable.status, variable.raw).toBe(201);
    await createStack(w.project.default_environment_id);
    return { ...w, source };
  }

  const CREATES = [
    {
      name: "createEnvironment",
      table: "environments",
      send: (w: Awaited<ReturnType<typeof world>>) => postEnvironment(w.owner, w.project.id, { name: "new" }),
    },
    {
      name: "createEnvironment with copy_variables_from",
      table: "variables",
      send: (w: Awaited<ReturnType<typeof world>>) =>
        postEnvironment(w.owner, w.project.id, { name: "copy", copy_variables_from: w.source.id }),
    },
    {
      name: "createDeployment",
      table: "deployments",
      send: (w: Awaited<ReturnType<typeof world>>) =>
        request<ErrorBody>("POST", `${environmentPath(w.project.default_environment_id)}/deployments`, {
          key: w.owner.key,
          body: { data: { patch: PATCH } },
        }),
    },
  ];

  it.each(CREATES)("$name: 201 or 404 over concurrent rounds, never 500, nothing left", async (c) => {
    const worlds = [];
    for (let i = 0; i < AT_ONCE; i++) worlds.push(await world());
    await Promise.all(
      worlds.map(async (w, i) => {
        const deleter = (await createApiKey(w.owner)).key;
        const [created, deleted] = await Promise.all([
          c.send(w),
          sleep(i % 4).then(() => request("DELETE", `/v1/projects/${w.project.id}`, { key: deleter })),
        ]);
        expect(deleted.status, deleted.raw).toBe(204);
        expect([201, 404], created.raw).toContain(created.status);
        if (created.status === 404) expect((created.body as ErrorBody).code).toBe("not_found");
        for (const table of ["environments", "variables", "variable_versions", "deployments"]) {
          expect(await inProject(table, w.project.id), table).toBe(0);
        }
      }),
    );
  });

  it.each(CREATES)("$name: the project vanishing inside the INSERT is 404 not_found", async (c) => {
    const w = await world();
    const trigger = `vanish_project_${w.project.id}`;
    // Deletes the project as the create's INSERT runs: the row then fails its foreign key.
    await env.DB.prepare(
      `CREATE TRIGGER "${trigger}" BEFORE INSERT ON ${c.table} WHEN NEW.project_id = '${w.project.id}'
       BEGIN DELETE FROM projects WHERE id = '${w.project.id}'; END`,
    ).run();
    let res: ApiResponse<unknown>;
    try {
      res = await c.send(w);
    } finally {
      await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
    }
    expect([res.status, (res.body as ErrorBody).code], res.raw).toEqual([404, "not_found"]);
  });
});
