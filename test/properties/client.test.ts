/**
 * The TypeScript client (clients/typescript) against the real Worker: openapi-fetch with the
 * generated types, its retries and idempotency keys, and page iteration.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError, createDeployClient, pages, retryDelayMs } from "../../clients/typescript/src/index";
import { createEnvironment, createOrgWithOwner, unique } from "../helpers/factories";

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

  it("answers a 304 as empty: neither data nor error, the status on the response", async () => {
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
  });

  it("waits the backoff when there is no Retry-After, and never longer than maxDelayMs", () => {
    expect(retryDelayMs(new Response(null, { status: 503 }), 1, 60_000)).toBe(500);
    expect(retryDelayMs(new Response(null, { status: 503 }), 3, 60_000)).toBe(2000);
    expect(
      retryDelayMs(new Response(null, { status: 429, headers: { "retry-after": "120" } }), 1, 5000),
    ).toBe(5000);
  });
});
