/**
 * What follows a deployment's committed create is its consequence, not part of it (API_CONTRACT
 * §11: a 5xx changed nothing; §26): a wait timer the gate object could not take, or a `supersede`
 * whose cancels failed, is logged, and the create still answers its 201. Answering 5xx instead
 * would release the Idempotency-Key, and the retry would make a second deployment. The failures
 * are injected into the bindings of one request (the gate objects, a D1 statement); everything
 * else is the real runtime, and the backstop each failure is left to then does the work.
 */
import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { request } from "../helpers/api";
import { unique } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";
import { type Deployment, engineCreateOk, protectedWorld, readDeployment } from "../helpers/protection";

const runCron = () => worker.scheduled(createScheduledController({ cron: "*/5 * * * *" }), env);

/** ENVIRONMENT_GATES whose objects always throw: the gate object reset or unreachable. */
const brokenGates = {
  idFromName: (name: string) => env.ENVIRONMENT_GATES.idFromName(name),
  get: () => ({
    schedule: () => Promise.reject(new Error("Durable Object reset because its code was updated.")),
  }),
} as unknown as Env["ENVIRONMENT_GATES"];

/** The DB binding, every session of which fails the statements whose SQL starts with `prefix`. */
function failingStatements(prefix: string): D1Database {
  const failing = (sqlText: string, statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(inner, prop) {
        if (prop === "bind") return (...values: unknown[]) => failing(sqlText, inner.bind(...values));
        const value = Reflect.get(inner, prop);
        if (typeof value !== "function") return value;
        if (sqlText.startsWith(prefix)) return () => Promise.reject(new Error("D1_ERROR: injected failure"));
        return value.bind(inner);
      },
    });
  const session = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(inner, prop) {
        if (prop === "prepare") {
          return (sqlText: string) => failing(sqlText, (inner as D1Database).prepare(sqlText));
        }
        if (prop === "withSession") {
          return (start: string) => session((inner as D1Database).withSession(start));
        }
        const value = Reflect.get(inner, prop);
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  return session(env.DB);
}

const createIn = (
  key: string,
  environmentId: string,
  headers: Record<string, string>,
  bindings?: Partial<Env>,
) =>
  request<Deployment>("POST", `/v1/environments/${environmentId}/deployments`, {
    key,
    body: { data: { patch: [] } },
    headers,
    ...(bindings ? { bindings } : {}),
  });

const deploymentsIn = async (environmentId: string) =>
  (
    await env.DB.prepare(
      "SELECT id, status FROM deployments WHERE environment_id = ? ORDER BY created_at, id",
    )
      .bind(environmentId)
      .all<{ id: string; status: string }>()
  ).results;

describe("a create's consequences failing after its commit", () => {
  const errors = captureLogs("error");
  captureLogs("warn"); // the cron's summary of what its sweep settled

  it("the gate object cannot take the wait timer: 201 waiting, a retry replays it, and the cron releases it", async () => {
    const w = await protectedWorld({ wait_timer: 60 });
    const headers = { "idempotency-key": unique("key") };
    const res = await createIn(w.owner.key, w.environmentId, headers, { ENVIRONMENT_GATES: brokenGates });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.status).toBe("waiting");
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "deployment committed; its wait timer failed and is left to its backstop",
        deployment_id: res.body.id,
      }),
    );
    const retry = await createIn(w.owner.key, w.environmentId, headers);
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body.id]).toEqual([
      201,
      "true",
      res.body.id,
    ]);
    expect(await deploymentsIn(w.environmentId)).toEqual([{ id: res.body.id, status: "waiting" }]);

    // No object holds its timer: two minutes on, the cron's sweep releases it.
    await env.DB.prepare("UPDATE deployments SET gate = json_set(gate, '$.wait_until', ?) WHERE id = ?")
      .bind(new Date(Date.now() - 2 * 60_000).toISOString(), res.body.id)
      .run();
    await runCron();
    expect((await readDeployment(w.owner, res.body.id)).status).toBe("queued");
  });

  it("supersede's cancels fail: 201 queued, the older deployment stays, and the next create supersedes both", async () => {
    const w = await protectedWorld({ concurrency: "supersede" });
    const older = await engineCreateOk(w.environmentId, [w.stack.id]);
    const headers = { "idempotency-key": unique("key") };
    const res = await createIn(w.owner.key, w.environmentId, headers, {
      DB: failingStatements('select "concurrency" from "environment_protections"'),
    });
    expect(res.status, res.raw).toBe(201);
    expect(res.body.status).toBe("queued");
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({
        msg: "deployment committed; its supersede failed and is left to its backstop",
        deployment_id: res.body.id,
      }),
    );
    const retry = await createIn(w.owner.key, w.environmentId, headers);
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body.id]).toEqual([
      201,
      "true",
      res.body.id,
    ]);
    expect(await deploymentsIn(w.environmentId)).toEqual([
      { id: older.id, status: "queued" },
      { id: res.body.id, status: "queued" },
    ]);

    const next = await createIn(w.owner.key, w.environmentId, {});
    expect(next.status, next.raw).toBe(201);
    expect(await deploymentsIn(w.environmentId)).toEqual([
      { id: older.id, status: "cancelled" },
      { id: res.body.id, status: "cancelled" },
      { id: next.body.id, status: "queued" },
    ]);
  });
});
