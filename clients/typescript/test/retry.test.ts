import { describe, expect, it } from "vitest";
import { backoffMs, createDeployClient, retryAfterMs } from "../src/index.js";

describe("back-off", () => {
  it("is jittered in the upper half of the exponential step, and obeys Retry-After as given", () => {
    const none = new Response(null, { status: 503 });
    expect(backoffMs(none, 1, 60_000, () => 0)).toBe(250);
    expect(backoffMs(none, 1, 60_000, () => 0.999999)).toBe(500);
    expect(backoffMs(none, 3, 60_000, () => 0.5)).toBe(1500);
    expect(backoffMs(none, 20, 4000, () => 0)).toBe(2000);
    const after = new Response(null, { status: 429, headers: { "retry-after": "7" } });
    expect(backoffMs(after, 1, 60_000, () => 0)).toBe(7000);
    expect(retryAfterMs(new Response(null, { headers: { "retry-after": "soon" } }))).toBeNull();
    const date = new Date(Date.now() + 10_000).toUTCString();
    expect(retryAfterMs(new Response(null, { headers: { "retry-after": date } }))).toBeGreaterThan(8000);
  });

  it("spreads the waits of many clients", () => {
    const waits = new Set(Array.from({ length: 50 }, () => backoffMs(null, 4, 60_000)));
    expect(waits.size).toBeGreaterThan(25);
    for (const w of waits) expect(w).toBeGreaterThanOrEqual(2000);
  });

  it("retries a request that got no answer, a write with the same Idempotency-Key", async () => {
    const keys: Array<string | null> = [];
    const waits: number[] = [];
    let calls = 0;
    const client = createDeployClient({
      baseUrl: "http://api.test",
      apiKey: "dpk_x",
      random: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
      fetch: async (input, init) => {
        const req = new Request(input, init);
        keys.push(req.headers.get("idempotency-key"));
        if (++calls < 3) throw new TypeError("fetch failed");
        return Response.json({ id: "p" }, { status: 201 });
      },
    });
    const { response } = await client.POST("/v1/projects", { body: { name: "x" } });
    expect(response.status).toBe(201);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(waits).toEqual([250, 500]);
  });

  it("does not retry an aborted request", async () => {
    let calls = 0;
    const controller = new AbortController();
    const client = createDeployClient({
      baseUrl: "http://api.test",
      apiKey: "dpk_x",
      fetch: async () => {
        calls++;
        controller.abort();
        throw new DOMException("aborted", "AbortError");
      },
    });
    await expect(client.GET("/v1/projects", { signal: controller.signal })).rejects.toThrow();
    expect(calls).toBe(1);
  });
});

describe("the base URL", () => {
  it("may end in /v1 or /v1/: the paths, which start with /v1, are not doubled", async () => {
    const paths: string[] = [];
    for (const base of ["http://api.test", "http://api.test/", "http://api.test/v1", "http://api.test/v1/"]) {
      const client = createDeployClient({
        baseUrl: base,
        apiKey: "dpk_x",
        fetch: async (input, init) => {
          paths.push(new URL(new Request(input, init).url).pathname);
          return Response.json({ data: [], has_more: false });
        },
      });
      await client.GET("/v1/projects");
    }
    expect(paths).toEqual(Array(4).fill("/v1/projects"));
  });
});
