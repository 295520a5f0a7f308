/**
 * A promotion (API_CONTRACT §25) racing what can change under it ends in one consistent state: a
 * promotion from a deployment that was `succeeded` when it was read, or a clean refusal; never a
 * 500, never a deployment whose environment is gone (§23: an environment with a `queued`
 * deployment is not deleted). Real concurrency (`Promise.all`, many rounds, the second request
 * started 0–3 ms after the first), and, for the delete of the target, the exact moment too: a D1
 * trigger that deletes the target environment inside the promotion's own INSERT.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { type ApiResponse, request } from "../../helpers/api";
import { newDeployment, PATCH, report, reportOk } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import {
  type Caller,
  createEnvironment,
  createOrgWithOwner,
  createProject,
  createStack,
  unique,
} from "../../helpers/factories";
import { applied } from "../../helpers/variable-sets";
import { environmentPath } from "../../helpers/variables";

type Deployment = DeploymentRecord;
type Answer = ApiResponse<Deployment & ErrorBody>;

const promote = (caller: Caller, id: string, environmentId: string, headers: Record<string, string> = {}) =>
  request<Deployment & ErrorBody>("POST", `/v1/deployments/${id}/promote`, {
    key: caller.key,
    body: { environment_id: environmentId },
    headers,
  });

const later = <T>(ms: number, f: () => Promise<T>) =>
  new Promise((resolve) => setTimeout(resolve, ms)).then(f);

/** A deployment of `stackIds` brought to `in_progress` (and on to `succeeded` unless `running`). */
async function original(environmentId: string, stackIds: string[], running = false): Promise<Deployment> {
  const created = await newDeployment(environmentId, { stack_ids: stackIds, data: { patch: PATCH } });
  expect(created.status, created.raw).toBe(201);
  const moved = await reportOk(created.body.id, { status: "in_progress" });
  return running ? moved : reportOk(created.body.id, { status: "succeeded" });
}

/**
 * A project of `owner`'s whose default environment (the source) has a stack and an original of
 * it, and a second environment (the target, which can be deleted) with a stack of its template.
 */
async function promotable(owner: Caller, running = false) {
  const project = await createProject(owner);
  const source = project.default_environment_id;
  const target = (await createEnvironment(project.id, unique("staging"))).id;
  const stack = await createStack(source, { template_id: "app" });
  const targetStack = await createStack(target, { template_id: "app" });
  return { project, source, target, targetStack, original: await original(source, [stack.id], running) };
}

/** Deployments of the project whose environment no longer exists (there must never be one). */
async function orphans(projectId: string): Promise<number> {
  const row = await env.DB.prepare(
    `SELECT count(*) AS n FROM deployments d
      WHERE d.project_id = ? AND NOT EXISTS (SELECT 1 FROM environments e WHERE e.id = d.environment_id)`,
  )
    .bind(projectId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

const rowsIn = async (table: string, column: string, value: string) =>
  (
    await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
      .bind(value)
      .first<{ n: number }>()
  )?.n ?? 0;

/** A refusal of a promotion to an environment that is gone: 400 (environment_id) or 404. */
function expectCleanRefusal(res: Answer) {
  expect([400, 404], res.raw).toContain(res.status);
  if (res.status === 400) {
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain("environment_id");
  } else expect(res.body.code).toBe("not_found");
}

describe("promotion races", () => {
  it("promote racing DELETE of the target environment: 201 and 409, or 204 and a refusal; never 500, never an orphan", async () => {
    const { owner } = await createOrgWithOwner();
    const outcomes = { promoted: 0, deleted: 0 };
    for (let round = 0; round < 4; round++) {
      const worlds = [];
      for (let i = 0; i < 6; i++) worlds.push(await promotable(owner));
      await Promise.all(
        worlds.map(async (w, i) => {
          // Half the rounds start the promotion first, half the delete, the other 0–3 ms later.
          const [first, second] = i % 2 === 0 ? [0, i % 4] : [i % 4, 0];
          const [promoted, deleted] = await Promise.all([
            later(first, () => promote(owner, w.original.id, w.target)),
            later(second, () =>
              request<ErrorBody>("DELETE", `/v1/environments/${w.target}`, { key: owner.key }),
            ),
          ]);
          expect(promoted.status, promoted.raw).toBeLessThan(500);
          expect(deleted.status, deleted.raw).toBeLessThan(500);
          if (promoted.status === 201) {
            outcomes.promoted++;
            // The new deployment is queued in the target, so the delete is refused.
            expect([deleted.status, deleted.body?.code], deleted.raw).toEqual([409, "conflict"]);
            expect(promoted.body.environment_id).toBe(w.target);
            expect(await rowsIn("environments", "id", w.target)).toBe(1);
            expect(await rowsIn("deployments", "id", promoted.body.id)).toBe(1);
          } else {
            outcomes.deleted++;
            expect(deleted.status, deleted.raw).toBe(204);
            expectCleanRefusal(promoted);
            expect(await rowsIn("environments", "id", w.target)).toBe(0);
            expect(await rowsIn("deployments", "environment_id", w.target)).toBe(0);
            expect(await rowsIn("stacks", "environment_id", w.target)).toBe(0);
          }
          expect(await orphans(w.project.id)).toBe(0);
          // The original is untouched either way.
          const read = await request<Deployment>("GET", `/v1/deployments/${w.original.id}`, {
            key: owner.key,
          });
          expect(read.body).toEqual(w.original);
        }),
      );
    }
    expect(outcomes.promoted + outcomes.deleted).toBe(24);
    // Both orders happened.
    expect(outcomes.promoted).toBeGreaterThan(0);
    expect(outcomes.deleted).toBeGreaterThan(0);
  });

  it("the target environment deleted inside the promotion's INSERT: a clean refusal, nothing written", async () => {
    const { owner } = await createOrgWithOwner();
    const w = await promotable(owner);
    const trigger = `vanish_${w.target}`;
    await env.DB.prepare(
      `CREATE TRIGGER "${trigger}" BEFORE INSERT ON deployments WHEN NEW.environment_id = '${w.target}'
       BEGIN DELETE FROM environments WHERE id = '${w.target}'; END`,
    ).run();
    let res: Answer;
    try {
      res = await promote(owner, w.original.id, w.target);
    } finally {
      await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
    }
    expectCleanRefusal(res);
    expect(await rowsIn("deployments", "environment_id", w.target)).toBe(0);
    const events = await env.DB.prepare(
      "SELECT count(*) AS n FROM events WHERE project_id = ? AND type = 'promotion.created'",
    )
      .bind(w.project.id)
      .first<{ n: number }>();
    expect(events?.n).toBe(0);
    expect(await orphans(w.project.id)).toBe(0);
  });

  it("promote racing the engine finishing the original and a cancel of it: 201 only from a succeeded original", async () => {
    const { owner } = await createOrgWithOwner();
    const seen = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const worlds = [];
      for (let i = 0; i < 6; i++) worlds.push(await promotable(owner, true));
      await Promise.all(
        worlds.map(async (w, i) => {
          const [promoted, engine, cancel] = await Promise.all([
            later(i % 3, () => promote(owner, w.original.id, w.target)),
            later((i + 1) % 3, () => report(w.original.id, { status: "succeeded" })),
            later((i + 2) % 3, () =>
              request<Deployment & ErrorBody>("PATCH", `/v1/deployments/${w.original.id}/cancel`, {
                key: owner.key,
              }),
            ),
          ]);
          for (const res of [promoted, engine, cancel]) expect(res.status, res.raw).toBeLessThan(500);
          // Exactly one of the engine and the cancel finished the original.
          expect([engine.status, cancel.status].sort()).toEqual([200, 409]);
          const final = await request<Deployment>("GET", `/v1/deployments/${w.original.id}`, {
            key: owner.key,
          });
          const made = await rowsIn("deployments", "promoted_from", w.original.id);
          if (promoted.status === 201) {
            seen.add("promoted");
            expect(final.body.status).toBe("succeeded");
            expect(promoted.body).toMatchObject({
              promoted_from: w.original.id,
              environment_id: w.target,
              stack_ids: [w.targetStack.id],
              status: "queued",
              data: { patch: PATCH },
            });
            expect(made).toBe(1);
          } else {
            seen.add("refused");
            expect([promoted.status, promoted.body.code], promoted.raw).toEqual([409, "conflict"]);
            expect(made).toBe(0);
          }
          if (final.body.status === "cancelled") expect(promoted.status).toBe(409);
        }),
      );
    }
    // Both orders happened: a promotion that won over the engine's report and one that came after it.
    expect([...seen].sort()).toEqual(["promoted", "refused"]);
  });

  it("promote racing a cancel of a succeeded original: the cancel is 409 (final), the promotion 201", async () => {
    const { owner } = await createOrgWithOwner();
    const worlds = [];
    for (let i = 0; i < 6; i++) worlds.push(await promotable(owner));
    await Promise.all(
      worlds.map(async (w, i) => {
        const [promoted, cancel] = await Promise.all([
          promote(owner, w.original.id, w.target),
          later(i % 4, () =>
            request<ErrorBody>("PATCH", `/v1/deployments/${w.original.id}/cancel`, { key: owner.key }),
          ),
        ]);
        expect([cancel.status, cancel.body.code], cancel.raw).toEqual([409, "conflict"]);
        expect(promoted.status, promoted.raw).toBe(201);
        const read = await request<Deployment>("GET", `/v1/deployments/${w.original.id}`, { key: owner.key });
        expect(read.body).toEqual(w.original);
      }),
    );
  });

  it("concurrent promotions of one original each make their own deployment; with one Idempotency-Key, one", async () => {
    const { owner } = await createOrgWithOwner();
    const w = await promotable(owner);
    const free = await Promise.all(Array.from({ length: 5 }, () => promote(owner, w.original.id, w.target)));
    for (const res of free) expect(res.status, res.raw).toBe(201);
    const ids = new Set(free.map((r) => r.body.id));
    expect(ids.size).toBe(5);
    expect(await rowsIn("deployments", "promoted_from", w.original.id)).toBe(5);

    const headers = { "idempotency-key": crypto.randomUUID() };
    const keyed = await Promise.all(
      Array.from({ length: 5 }, () => promote(owner, w.original.id, w.target, headers)),
    );
    for (const res of keyed) expect([201, 409], res.raw).toContain(res.status);
    const made = new Set(keyed.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(made.size).toBe(1);
    for (const res of keyed.filter((r) => r.status === 409)) expect(res.headers.get("retry-after")).toBe("1");
    expect(await rowsIn("deployments", "promoted_from", w.original.id)).toBe(6);
  });

  it("promote racing a variable change of the target: its config is wholly before or wholly after the change", async () => {
    const { owner } = await createOrgWithOwner();
    for (let round = 0; round < 3; round++) {
      const worlds = [];
      for (let i = 0; i < 4; i++) {
        const w = await promotable(owner);
        await applied(owner, environmentPath(w.target), {
          variables: { A: { type: "string", value: "1" } },
        });
        worlds.push(w);
      }
      await Promise.all(
        worlds.map(async (w, i) => {
          const [promoted, change] = await Promise.all([
            promote(owner, w.original.id, w.target),
            later(i % 4, () =>
              request("PATCH", environmentPath(w.target), {
                key: owner.key,
                body: {
                  variables: {
                    A: null,
                    B: { type: "string", value: "2" },
                    C: { type: "secret", value: "3" },
                  },
                },
              }),
            ),
          ]);
          expect(promoted.status, promoted.raw).toBe(201);
          expect(change.status, change.raw).toBe(200);
          const version = promoted.body.config?.environment_version;
          expect([1, 2]).toContain(version);
          const config = await request<{
            environment: { version: number; variables: Array<{ name: string }> };
          }>("GET", `/v1/deployments/${promoted.body.id}/config`, { key: owner.key });
          expect(config.status, config.raw).toBe(200);
          expect(config.body.environment.variables.map((v) => v.name)).toEqual(
            version === 1 ? ["A"] : ["B", "C"],
          );
        }),
      );
    }
  });
});
