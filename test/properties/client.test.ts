/**
 * The TypeScript client (clients/typescript) against the real Worker: openapi-fetch with the
 * generated types, its retries and idempotency keys, and page iteration.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  ApiError,
  createDeployClient,
  follow,
  pages,
  retryDelayMs,
  type TimelineEntry,
  unwrap,
  waitForDeployment,
} from "../../clients/typescript/src/index";
import { logLines, postLogs, reportOk, timelineOf } from "../helpers/engine";
import {
  createDeployment,
  createEnvironment,
  createOrgWithOwner,
  createProjectWithStack,
  unique,
} from "../helpers/factories";
import { sleep } from "../helpers/wait";

const BASE = "http://api.test";
const worker: typeof fetch = (input, init) => exports.default.fetch(new Request(input, init));

describe("the typed client", () => {
  it("lists, creates, reveals a variable value, paginates, and returns typed errors", async () => {
    const { owner } = await createOrgWithOwner();
    const client = createDeployClient({ baseUrl: BASE, apiKey: owner.key, fetch: worker });

    const empty = await client.GET("/v1/projects");
    expect(empty.data?.data).toEqual([]);

    const names = [unique("a"), unique("b"), unique("c")];
    const ids: string[] = [];
    for (const name of names) {
      const { data, response } = await client.POST("/v1/projects", { body: { name } });
      expect(response.status).toBe(201);
      if (data) ids.push(data.id);
    }
    expect(ids).toHaveLength(3);

    const seen: string[] = [];
    for await (const project of pages((after) =>
      client.GET("/v1/projects", { params: { query: { after, limit: 1, sort_by: "+created_at" } } }),
    )) {
      seen.push(project.name);
    }
    expect(seen).toEqual(names);

    const env = await createEnvironment(ids[0] as string);
    const created = await client.POST("/v1/environments/{environment_id}/variables", {
      params: { path: { environment_id: env.id } },
      body: { name: "DATABASE_URL", type: "secret", value: "postgres://s3cret" },
    });
    expect(created.response.status).toBe(201);
    const revealed = await client.GET("/v1/variables/{variable_id}/value", {
      params: { path: { variable_id: created.data?.id as string } },
    });
    expect(revealed.data).toMatchObject({ value: "postgres://s3cret" });

    const bad = await client.GET("/v1/projects/{project_id}", { params: { path: { project_id: "nope" } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.code).toBe("bad_input");
    const missing = await client.GET("/v1/projects/{project_id}", {
      params: { path: { project_id: "1111111111111111111111" } },
    });
    expect(missing.error?.code).toBe("not_found");
    await expect(
      (async () => {
        for await (const _ of pages((after) =>
          client.GET("/v1/projects", { params: { query: { after, limit: 0 } } }),
        ));
      })(),
    ).rejects.toBeInstanceOf(ApiError);
  });

  it("retries 429 and 5xx after Retry-After, with one Idempotency-Key across the attempts", async () => {
    const { owner } = await createOrgWithOwner();
    const keys: Array<string | null> = [];
    const waits: number[] = [];
    let failuresLeft = 2;
    const flaky: typeof fetch = async (input, init) => {
      const req = new Request(input, init);
      keys.push(req.headers.get("idempotency-key"));
      if (failuresLeft-- > 0) {
        return new Response('{"code":"rate","message":"slow down"}', {
          status: failuresLeft === 1 ? 429 : 503,
          headers: { "retry-after": "3", "content-type": "application/json" },
        });
      }
      return worker(req);
    };
    const client = createDeployClient({
      baseUrl: BASE,
      apiKey: owner.key,
      fetch: flaky,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const { data, response } = await client.POST("/v1/projects", { body: { name: unique("retried") } });
    expect(response.status).toBe(201);
    expect(data?.name).toMatch(/^retried-/);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(waits).toEqual([3000, 3000]);

    // Bounded: a server that keeps failing is given up after maxAttempts.
    let calls = 0;
    const down = createDeployClient({
      baseUrl: BASE,
      apiKey: owner.key,
      maxAttempts: 3,
      sleep: async () => {},
      fetch: async () => {
        calls++;
        return new Response('{"code":"internal","message":"down"}', { status: 500 });
      },
    });
    const failed = await down.GET("/v1/projects");
    expect(failed.response.status).toBe(500);
    expect(failed.error?.code).toBe("internal");
    expect(calls).toBe(3);

    // Reads carry no idempotency key; 4xx other than 429 is not retried.
    const seen: Array<string | null> = [];
    const once = createDeployClient({
      baseUrl: BASE,
      apiKey: owner.key,
      fetch: async (input, init) => {
        const req = new Request(input, init);
        seen.push(req.headers.get("idempotency-key"));
        return worker(req);
      },
    });
    expect(
      (await once.GET("/v1/projects/{project_id}", { params: { path: { project_id: "x" } } })).error?.code,
    ).toBe("bad_input");
    expect(seen).toEqual([null]);
  });

  it("retries a write's 409 that carries Retry-After (its key still executing), and no other 409", async () => {
    const { owner } = await createOrgWithOwner();
    const answers: number[] = [];
    let call = 0;
    const client = createDeployClient({
      baseUrl: BASE,
      apiKey: owner.key,
      sleep: async () => {},
      fetch: async (input, init) => {
        const req = new Request(input, init);
        call++;
        // The first try is lost (a 503 from a proxy) while it executes; the retry meets it
        // still executing (the server's 409 with Retry-After: 1); the next gets its answer.
        const res =
          call === 1
            ? new Response('{"code":"internal","message":"proxy"}', { status: 503 })
            : call === 2
              ? new Response('{"code":"conflict","message":"still executing"}', {
                  status: 409,
                  headers: { "retry-after": "1", "content-type": "application/json" },
                })
              : await worker(req);
        answers.push(res.status);
        return res;
      },
    });
    const name = unique("inflight");
    const created = await client.POST("/v1/projects", { body: { name } });
    expect(answers).toEqual([503, 409, 201]);
    expect(created.data?.name).toBe(name);

    // A real conflict (the name is taken) has no Retry-After: answered at once.
    answers.length = 0;
    const taken = await client.POST("/v1/projects", { body: { name } });
    expect(answers).toEqual([409]);
    expect(taken.error?.code).toBe("conflict");
  });

  it("answers a 304 as empty: neither data nor error, the status on the response; unwrap() gives undefined for it and a 204", async () => {
    const { owner } = await createOrgWithOwner();
    const client = createDeployClient({ baseUrl: BASE, apiKey: owner.key, fetch: worker });
    const created = await client.POST("/v1/projects", { body: { name: unique("etag") } });
    const project_id = created.data?.id as string;
    const first = await client.GET("/v1/projects/{project_id}", { params: { path: { project_id } } });
    const etag = first.response.headers.get("etag") as string;
    expect(etag).toMatch(/^"/);
    const again = await client.GET("/v1/projects/{project_id}", {
      params: { path: { project_id } },
      headers: { "if-none-match": etag },
    });
    expect(again.response.status).toBe(304);
    expect(again.response.headers.get("etag")).toBe(etag);
    expect(again.data).toBeUndefined();
    expect(again.error).toBeUndefined();
    expect(unwrap(again)).toBeUndefined();
    // A 204 is a success too: unwrap() answers undefined, it does not throw.
    const key = await client.POST("/v1/api-keys", { body: { name: "revoked at once" } });
    const id = key.data?.id as string;
    const revoked = await client.DELETE("/v1/api-keys/{id}", { params: { path: { id } } });
    expect(revoked.response.status).toBe(204);
    expect(unwrap(revoked)).toBeUndefined();
  });

  it("passes an answer's X-D1-Bookmark (signed, src/crypto/bookmarks.ts) on to another key's read as it came", async () => {
    const a = createDeployClient({
      baseUrl: BASE,
      apiKey: (await createOrgWithOwner()).owner.key,
      fetch: worker,
    });
    const b = createDeployClient({
      baseUrl: BASE,
      apiKey: (await createOrgWithOwner()).owner.key,
      fetch: worker,
    });
    const written = await a.POST("/v1/projects", { body: { name: unique("bookmark") } });
    const bookmark = written.response.headers.get("x-d1-bookmark") as string;
    expect(bookmark).toMatch(/^DB:[0-9a-f-]{59}\.[A-Za-z0-9_-]{43}$/);
    const read = await b.GET("/v1/projects", { params: { header: { "X-D1-Bookmark": bookmark } } });
    expect(read.response.status).toBe(200);
    // At least as fresh as the bookmark it was given (the answer's own, signed anew).
    expect((read.response.headers.get("x-d1-bookmark") as string) >= bookmark.slice(0, 62)).toBe(true);
  });

  it("waits the backoff when there is no Retry-After, and never longer than maxDelayMs", () => {
    expect(retryDelayMs(new Response(null, { status: 503 }), 1, 60_000)).toBe(500);
    expect(retryDelayMs(new Response(null, { status: 503 }), 3, 60_000)).toBe(2000);
    expect(
      retryDelayMs(new Response(null, { status: 429, headers: { "retry-after": "120" } }), 1, 5000),
    ).toBe(5000);
  });
});

/**
 * The Worker's answers, with every event stream cut after `keep` events (a dropped connection);
 * records each request's Last-Event-ID.
 */
function droppingWorker(keep: number, sent: Array<string | null>): typeof fetch {
  return async (input, init) => {
    const req = new Request(input, init);
    sent.push(req.headers.get("last-event-id"));
    const res = await worker(req);
    if (!res.body || !res.headers.get("content-type")?.startsWith("text/event-stream")) return res;
    // Pass whole events through, up to the `keep`-th, then close (comments are passed too).
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = "";
    let events = 0;
    const cut = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, end + 2);
          buffer = buffer.slice(end + 2);
          controller.enqueue(encoder.encode(block));
          if (!block.startsWith(":") && ++events === keep) {
            await reader.cancel();
            return controller.close();
          }
        }
      },
      cancel: () => reader.cancel(),
    });
    return new Response(cut, { status: res.status, headers: res.headers });
  };
}

describe("following a deployment with the client", () => {
  it("follow() yields every entry once, in order, reconnecting with Last-Event-ID, then the final record", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    await postLogs(deployment.id, logLines(4));
    const sent: Array<string | null> = [];
    const client = createDeployClient({ baseUrl: BASE, apiKey: owner.key, fetch: droppingWorker(2, sent) });
    const seen: TimelineEntry[] = [];
    const iterator = follow(client, deployment.id, { sleep: async () => {} });
    const engine = (async () => {
      await reportOk(deployment.id, { status: "in_progress" });
      await postLogs(deployment.id, logLines(3, "later"));
      return reportOk(deployment.id, { status: "succeeded" });
    })();
    let final: unknown;
    for await (const event of iterator) {
      if (event.type === "entry") seen.push(event.entry);
      else final = event.deployment;
    }
    const done = await engine;
    expect(final).toEqual(done);
    expect(seen).toEqual(await timelineOf(owner.key, deployment.id));
    // Cut after two events each time: it reconnected from the last seq it had.
    expect(sent.slice(0, 3)).toEqual([null, "2", "4"]);
  });

  it("follow() from a position, and a refusal as ApiError", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    await postLogs(deployment.id, logLines(2));
    await reportOk(deployment.id, { status: "cancelled" });
    const client = createDeployClient({ baseUrl: BASE, apiKey: owner.key, fetch: worker });
    const seqs: number[] = [];
    for await (const event of follow(client, deployment.id, { afterSeq: 2 }))
      if (event.type === "entry") seqs.push(event.entry.seq);
    expect(seqs).toEqual([3, 4, 5]);
    const missing = follow(client, "1111111111111111111111");
    await expect(missing.next()).rejects.toMatchObject({ status: 404, body: { code: "not_found" } });
  });

  it("waitForDeployment() answers once the deployment is final, or as it stands at the caller's deadline", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    const client = createDeployClient({ baseUrl: BASE, apiKey: owner.key, fetch: worker });
    const early = await waitForDeployment(client, deployment.id, { timeoutMs: 1000 });
    expect(early).toMatchObject({ timedOut: true, deployment: { status: "queued" } });
    const waiting = waitForDeployment(client, deployment.id);
    await sleep(300);
    const done = await reportOk(deployment.id, { status: "cancelled" });
    expect(await waiting).toEqual({ deployment: done, timedOut: false });
  });
});
