/**
 * Idempotency-Key (API_CONTRACT §11) across a crash: a keyed write that committed but whose answer
 * was never stored (the request's isolate died between its D1 batch and the limiter's second
 * call) is never executed again, whatever the delay of the retry; the retry answers what the
 * write did. Through the real Worker, the real RateLimiter object and real D1: the crash is the
 * limiter's second call failing after the commit, the time a retry waits is the limiter's lease
 * and the entry's age moved on.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { LostAnswer } from "../../src/http/route-meta";
import { forgetExpiredKeys } from "../../src/idempotency/executed";
import { IDEMPOTENCY_TTL_MS } from "../../src/idempotency/store";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import { RECOVER_CHUNK } from "../../src/services/integrations/redelivery";
import { type ApiResponse, interceptStatements, limiterOf, request } from "../helpers/api";
import { serviceContext } from "../helpers/context";
import type { ErrorBody } from "../helpers/expect";
import {
  type Caller,
  createDeployment,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  unique,
} from "../helpers/factories";
import { setupIntegration } from "../helpers/integrations";
import { captureLogs } from "../helpers/logs";
import { operations } from "../helpers/openapi";
import { allowTheLocalReceiver, bulkFailedDeliveries } from "../helpers/webhooks";

// The recover below queues deliveries to the local receiver (http://127.0.0.1), as in local development.
allowTheLocalReceiver();

type Record_ = { id: string; name?: string; updated_at?: string };

/**
 * A RATE_LIMITER whose objects admit and claim as the real ones do (they are the real ones), but
 * are lost before the answer is stored: what a request that dies right after its commit leaves.
 */
function lostAfterCommit(): { binding: Env["RATE_LIMITER"]; lost: () => number } {
  let lost = 0;
  const binding = {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: (id: DurableObjectId) => {
      const real = env.RATE_LIMITER.get(id);
      return {
        admit: (req: Parameters<RateLimiter["admit"]>[0]) => real.admit(req),
        recordBookmark: (bookmark: string) => real.recordBookmark(bookmark),
        settle: () => {
          lost++;
          return Promise.reject(new Error("the isolate died before the answer was stored"));
        },
      };
    },
  } as unknown as Env["RATE_LIMITER"];
  return { binding, lost: () => lost };
}

const inLimiter = <T>(caller: Caller, fn: (state: DurableObjectState) => T) =>
  runInDurableObject(limiterOf(`key:${caller.keyId}`), (_i: RateLimiter, state) => fn(state));

/** The claim's lease runs out (the retry came over a minute later). */
const lapse = (caller: Caller, key: string) =>
  inLimiter(caller, (state) =>
    state.storage.sql.exec("UPDATE idempotency SET lease_until = ? WHERE key = ?", Date.now() - 1, key),
  );

/** The limiter forgets the key altogether (its whole entry is gone). */
const forget = (caller: Caller, key: string) =>
  inLimiter(caller, (state) => state.storage.sql.exec("DELETE FROM idempotency WHERE key = ?", key));

/** The write's entry is `ms` old (the key's age in D1). */
const ageEntry = (key: string, ms: number) =>
  env.DB.prepare("UPDATE audit_log SET created_at = ? WHERE idempotency_key = ?")
    .bind(new Date(Date.now() - ms).toISOString(), key)
    .run();

const keyedEntries = async (key: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE idempotency_key = ?")
      .bind(key)
      .first<{ n: number }>()
  )?.n;

/** A keyed write; with `crash`, one whose answer is lost after its commit (asserted: it was). */
async function send<T = Record_>(
  caller: Caller,
  method: string,
  path: string,
  key: string,
  body?: unknown,
  crash = false,
): Promise<ApiResponse<T>> {
  const lost = crash ? lostAfterCommit() : undefined;
  const res = await request<T>(method, path, {
    key: caller.key,
    headers: { "idempotency-key": key },
    ...(body === undefined ? {} : { body }),
    ...(lost ? { bindings: { RATE_LIMITER: lost.binding } } : {}),
  });
  // The injected loss happened: the request ran, then storing its answer failed.
  if (lost) expect(lost.lost(), `${method} ${path}: its answer was to be lost`).toBe(1);
  return res;
}

async function countWhere(sql: string, ...bind: string[]) {
  return (
    await env.DB.prepare(sql)
      .bind(...bind)
      .first<{ n: number }>()
  )?.n;
}

function expectReplayOf(retry: ApiResponse<Record_>, current: ApiResponse<Record_>, status: number) {
  expect(retry.status).toBe(status);
  expect(retry.headers.get("idempotent-replayed")).toBe("true");
  expect(retry.raw).toBe(current.raw);
  expect(retry.headers.get("etag")).toBe(current.headers.get("etag"));
}

describe("a keyed write whose answer was lost after its commit", () => {
  // The lost answer is logged as an error by design (the limiter's second call failing).
  const errors = captureLogs("error");

  it("is never executed again, whatever the delay of the retry: the retry answers the record it created", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("lost");
    const name = unique("p");
    const first = await send(owner, "POST", "/v1/projects", key, { name }, true);
    expect(first.status).toBe(201);
    expect(errors.lines()).toContainEqual(expect.objectContaining({ msg: "idempotency settle failed" }));
    // The answer never reached the client. While the claim's lease runs, a retry waits.
    const early = await send(owner, "POST", "/v1/projects", key, { name });
    expect([early.status, early.headers.get("retry-after")]).toEqual([409, "1"]);

    // A minute later, an hour later, a day less a minute later: the write is answered, not run.
    for (const delay of [60_000, 3600_000, IDEMPOTENCY_TTL_MS - 60_000]) {
      await lapse(owner, key);
      await ageEntry(key, delay);
      const retry = await send(owner, "POST", "/v1/projects", key, { name });
      const current = await request<Record_>("GET", `/v1/projects/${first.body.id}`, { key: owner.key });
      expectReplayOf(retry, current, 201);
      expect(retry.body.id).toBe(first.body.id);
      expect(retry.headers.get("location")).toBe(`/v1/projects/${first.body.id}`);
      // The rebuilt answer is now the key's: the next retry is a plain replay of it.
      const again = await send(owner, "POST", "/v1/projects", key, { name });
      expectReplayOf(again, current, 201);
      // Back to the state of a claim that never settled, for the next delay.
      await inLimiter(owner, (state) =>
        state.storage.sql.exec(
          "UPDATE idempotency SET state = 'running', status = NULL, headers = NULL, body = NULL, ref = NULL WHERE key = ?",
          key,
        ),
      );
    }
    expect(await countWhere("SELECT count(*) AS n FROM projects WHERE org_id = ?", owner.orgId)).toBe(1);
    expect(await keyedEntries(key)).toBe(1);
  });

  it("a write whose answer cannot be rebuilt (a signing secret shown once) is still never run twice: 409, and it says so", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const path = `/v1/projects/${project.id}/notification-integrations`;
    const body = { type: "webhook", url: "https://hooks.example.com/x", configuration: { changelog: true } };
    const key = unique("lost");
    expect((await send(owner, "POST", path, key, body, true)).status).toBe(201);
    await lapse(owner, key);
    const retry = await send<ErrorBody>(owner, "POST", path, key, body);
    expect(retry.status).toBe(409);
    expect(retry.body.code).toBe("conflict");
    expect(retry.body.message).toMatch(/executed at .* will not execute again/);
    expect(retry.body.cause).toEqual([{ path: "header.idempotency-key", message: expect.any(String) }]);
    expect(retry.headers.get("retry-after")).toBeNull();
    const again = await send<ErrorBody>(owner, "POST", path, key, body);
    expect([again.status, again.raw, again.headers.get("idempotent-replayed")]).toEqual([
      409,
      retry.raw,
      "true",
    ]);
    expect(
      await countWhere(
        "SELECT count(*) AS n FROM notification_integrations WHERE project_id = ?",
        project.id,
      ),
    ).toBe(1);
  });

  it("a lost 204 (a delete) is answered 204 again, and a lost replace answers the record as it is", async () => {
    const { owner } = await createOrgWithOwner();
    const doomed = await createProject(owner);
    const del = unique("lost-del");
    expect((await send(owner, "DELETE", `/v1/projects/${doomed.id}`, del, undefined, true)).status).toBe(204);
    await lapse(owner, del);
    const deleted = await send(owner, "DELETE", `/v1/projects/${doomed.id}`, del);
    expect([deleted.status, deleted.raw, deleted.headers.get("idempotent-replayed")]).toEqual([
      204,
      "",
      "true",
    ]);

    const project = await createProject(owner);
    const put = unique("lost-put");
    const replace = { name: unique("renamed"), default_environment_id: project.default_environment_id };
    const first = await send(owner, "PUT", `/v1/projects/${project.id}`, put, replace, true);
    expect(first.status).toBe(200);
    await lapse(owner, put);
    const retry = await send(owner, "PUT", `/v1/projects/${project.id}`, put, replace);
    const current = await request<Record_>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expectReplayOf(retry, current, 200);
    expect(retry.body.updated_at).toBe(first.body.updated_at);
    expect(await keyedEntries(put)).toBe(1);
  });

  it("the same key with another request is 400 and runs nothing; the request that holds it is still answered", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("lost");
    const name = unique("p");
    const first = await send(owner, "POST", "/v1/projects", key, { name }, true);
    await lapse(owner, key);
    const other = await send<ErrorBody>(owner, "POST", "/v1/projects", key, { name: unique("other") });
    expect(other.status).toBe(400);
    expect(other.body.cause).toEqual([{ path: "header.idempotency-key", message: expect.any(String) }]);
    const retry = await send(owner, "POST", "/v1/projects", key, { name });
    expect([retry.status, retry.body.id, retry.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.body.id,
      "true",
    ]);
    expect(await countWhere("SELECT count(*) AS n FROM projects WHERE org_id = ?", owner.orgId)).toBe(1);
  });

  it("retries racing each other after the lease: none executes, each answers the replay or 409", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("race");
    const name = unique("p");
    const first = await send(owner, "POST", "/v1/projects", key, { name }, true);
    await lapse(owner, key);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => send(owner, "POST", "/v1/projects", key, { name })),
    );
    for (const a of answers) {
      if (a.status === 409) expect(a.headers.get("retry-after")).toBe("1");
      else
        expect([a.status, a.body.id, a.headers.get("idempotent-replayed")]).toEqual([
          201,
          first.body.id,
          "true",
        ]);
    }
    expect(answers.some((a) => a.status === 201)).toBe(true);
    expect(await countWhere("SELECT count(*) AS n FROM projects WHERE org_id = ?", owner.orgId)).toBe(1);
  });
});

describe("a keyed write that meets its committed key without a lapsed claim", () => {
  it("fails whole at its audit entry and answers what the committed execution did", async () => {
    // The limiter lost the entry altogether: the retry executes, and its batch meets the key.
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = unique("met");
    const replace = { name: unique("renamed"), default_environment_id: project.default_environment_id };
    const first = await send(owner, "PUT", `/v1/projects/${project.id}`, key, replace);
    expect(first.status).toBe(200);
    await forget(owner, key);
    const retry = await send(owner, "PUT", `/v1/projects/${project.id}`, key, replace);
    const current = await request<Record_>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expectReplayOf(retry, current, 200);
    expect(current.body.updated_at).toBe(first.body.updated_at);
    expect(await keyedEntries(key)).toBe(1);
    expect(
      await countWhere(
        "SELECT count(*) AS n FROM audit_log WHERE action = 'replaceProject' AND target_id = ?",
        project.id,
      ),
    ).toBe(1);
  });
});

describe("a keyed write that answers 5xx after its commit", () => {
  // The injected D1 failure surfaces as an unhandled error (500) by design.
  const errors = captureLogs("error");

  it("takes its key back, in D1 too (API_CONTRACT §11): the retry executes", async () => {
    // A recover commits its first 1,000-delivery step (moved, its audit entry holding the key),
    // then its second step's read fails: it answers 500 (the steps before stay taken), and the
    // retry executes, recovering the rest.
    const { owner, project, integration, path } = await setupIntegration();
    const start = new Date(Date.now() - 3600_000).toISOString();
    const bulk = await bulkFailedDeliveries(project.id, integration.id, RECOVER_CHUNK + 3, start);
    let reads = 0;
    const secondReadFails = interceptStatements({
      'select "webhook_deliveries"."id", "webhook_deliveries"."status"': async () => {
        reads += 1;
        if (reads === 2) throw new Error("D1_ERROR: injected failure");
      },
    });
    const key = unique("5xx");
    const recover = (bindings?: Partial<Env>) =>
      request<{ queued: number }>("POST", `${path}/recover`, {
        key: owner.key,
        body: { since: start },
        headers: { "idempotency-key": key },
        ...(bindings ? { bindings } : {}),
      });
    const failed = await recover({ DB: secondReadFails });
    expect(failed.status).toBe(500);
    expect(reads).toBe(2);
    expect(errors.lines()).toContainEqual(expect.objectContaining({ msg: "unhandled error" }));
    expect(await keyedEntries(key)).toBe(0);
    const retry = await recover();
    expect([retry.status, retry.headers.get("idempotent-replayed"), retry.body]).toEqual([
      202,
      null,
      { queued: 3 },
    ]);
    expect(await keyedEntries(key)).toBe(1);
    // The lane need not send them: it is emptied, and the events go.
    await bulk.forget();
  });
});

describe("keys in D1 are kept 24 h", () => {
  it("the cron forgets keys over 24 h old in bounded chunks, oldest first; younger ones stay", async () => {
    const { owner } = await createOrgWithOwner();
    const keys = [unique("old"), unique("old"), unique("old"), unique("young")];
    for (const key of keys)
      expect((await send(owner, "POST", "/v1/projects", key, { name: unique("p") })).status).toBe(201);
    for (const [i, key] of keys.slice(0, 3).entries())
      await ageEntry(key, IDEMPOTENCY_TTL_MS + 3000 - i * 1000);
    // Older keys of other tests may be waiting too: chunks of them, until this test's are gone.
    const ctx = serviceContext();
    let run = await forgetExpiredKeys(ctx, Date.now(), { batch: 2, maxStatements: 1 });
    expect(run).toEqual({ cleared: 2, done: false });
    for (let i = 0; i < 50 && !run.done; i++)
      run = await forgetExpiredKeys(ctx, Date.now(), { batch: 2, maxStatements: 5 });
    expect(run.done).toBe(true);
    expect(await Promise.all(keys.map(keyedEntries))).toEqual([0, 0, 0, 1]);
    // The entries themselves are the audit log's: they stay.
    expect(
      await countWhere(
        "SELECT count(*) AS n FROM audit_log WHERE actor_api_key_id = ? AND action = 'createProject'",
        owner.keyId,
      ),
    ).toBe(4);
  });

  it("a reuse that meets a key over 24 h old before the cron does forgets it: 409 Retry-After, then the retry executes", async () => {
    const { owner } = await createOrgWithOwner();
    const key = unique("reuse");
    expect((await send(owner, "POST", "/v1/projects", key, { name: unique("p") })).status).toBe(201);
    // A day later: the limiter forgot the key (its alarm), the cron has not run yet.
    await forget(owner, key);
    await ageEntry(key, IDEMPOTENCY_TTL_MS + 1000);
    const name = unique("p");
    const met = await send(owner, "POST", "/v1/projects", key, { name });
    expect([met.status, met.headers.get("retry-after")]).toEqual([409, "1"]);
    const retry = await send(owner, "POST", "/v1/projects", key, { name });
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(retry.body.name).toBe(name);
    expect(await keyedEntries(key)).toBe(1);
  });
});

describe("every write declares how its lost answer is rebuilt (x-lost-answer, on its defineRoute)", () => {
  it("each /v1 write of /openapi.json declares one its answers can honour; a read declares none", async () => {
    const ops = await operations();
    const reads = new Set(ops.filter((op) => op.method === "get").map((op) => op.path));
    const writes = ops.filter((op) => op.method !== "get");
    expect(writes.length).toBeGreaterThan(20);
    for (const { method, path, operation } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const declared = (operation as { "x-lost-answer"?: LostAnswer })["x-lost-answer"];
      const success = Object.keys(operation.responses).filter((s) => s.startsWith("2"));
      if (method === "get") {
        expect(declared, where).toBeUndefined();
        continue;
      }
      expect(declared, `${where} declares no x-lost-answer`).toBeDefined();
      if (declared?.rebuild === "status") expect(success, where).toEqual(["204"]);
      if (declared?.rebuild === "none") expect(declared.why.length, where).toBeGreaterThan(0);
      if (declared?.rebuild === "record") {
        expect(["200", "201"], where).toContain(success[0]);
        // The record is read again by a GET the document serves.
        const read = declared.from === "request-path" ? path : declared.from.replace("{target}", "{id}");
        const template = (p: string) => p.replace(/\{\w+\}/g, "{}");
        expect([...reads].map(template), where).toContain(template(read));
      }
    }
  });
});

async function deploymentOf() {
  const { owner, environmentId, stack } = await createProjectWithStack();
  return { owner, deployment: await createDeployment(environmentId, [stack.id]) };
}

describe("a lost deployment answer (redeploy, cancel) is rebuilt from the record, never run again", () => {
  const errors = captureLogs("error");

  it("a redeploy whose answer was lost answers its 201 and the new deployment on retry, and makes one", async () => {
    const { owner, deployment } = await deploymentOf();
    const key = unique("lost-redeploy");
    const path = `/v1/deployments/${deployment.id}/redeploy`;
    const first = await send(owner, "POST", path, key, {}, true);
    expect(first.status).toBe(201);
    expect(errors.lines()).toContainEqual(expect.objectContaining({ msg: "idempotency settle failed" }));
    await lapse(owner, key);
    const retry = await send(owner, "POST", path, key, {});
    const current = await request<Record_>("GET", `/v1/deployments/${first.body.id}`, { key: owner.key });
    expectReplayOf(retry, current, 201);
    expect(retry.headers.get("location")).toBe(`/v1/deployments/${first.body.id}`);
    expect(
      await countWhere("SELECT count(*) AS n FROM deployments WHERE redeploy_of = ?", deployment.id),
    ).toBe(1);
  });

  it("a cancel whose answer was lost answers the deployment as it is", async () => {
    const { owner, deployment } = await deploymentOf();
    const key = unique("lost-cancel");
    const path = `/v1/deployments/${deployment.id}/cancel`;
    expect((await send(owner, "PATCH", path, key, undefined, true)).status).toBe(200);
    await lapse(owner, key);
    const retry = await send(owner, "PATCH", path, key);
    const current = await request<Record_>("GET", `/v1/deployments/${deployment.id}`, { key: owner.key });
    expectReplayOf(retry, current, 200);
  });
});
