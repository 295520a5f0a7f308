/** Browsers: CORS on /v1, /openapi.json and /docs, none on /internal (API_CONTRACT §16, grown by §22). */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DOCS_RENDERER_PATH } from "../../src/openapi/routes";
import { type ApiResponse, freshClientIp, PRODUCTION_LIMITS, request } from "../helpers/api";
import { createOrgWithOwner, createProject } from "../helpers/factories";

const EXPOSED =
  "x-request-id, etag, location, retry-after, idempotent-replayed, x-ratelimit-limit, " +
  "x-ratelimit-remaining, x-ratelimit-reset, ratelimit, ratelimit-policy, x-d1-bookmark, content-location";
const ORIGIN = "https://app.example.org";

function preflight(path: string, headers: Record<string, string> = {}) {
  return request("OPTIONS", path, {
    headers: {
      origin: ORIGIN,
      "access-control-request-method": "POST",
      "access-control-request-headers": "x-api-key, content-type",
      ...headers,
    },
  });
}

function expectCors(res: ApiResponse) {
  expect(res.headers.get("access-control-allow-origin"), res.raw).toBe("*");
  expect(res.headers.get("access-control-expose-headers")).toBe(EXPOSED);
  expect(res.headers.get("access-control-allow-credentials")).toBeNull();
}

function expectNoCors(res: ApiResponse) {
  for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
}

describe("preflight", () => {
  it.each([
    "/v1/projects",
    "/v1/projects/1111111111111111111111/variables",
    "/v1/no/such/path",
    "/v1",
    "/openapi.json",
    "/docs",
    DOCS_RENDERER_PATH,
  ])("OPTIONS %s answers 204 with the §16 headers, without a key", async (path) => {
    const res = await preflight(path);
    expect(res.status, res.raw).toBe(204);
    expect(res.raw).toBe("");
    expectCors(res);
    expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE");
    expect(res.headers.get("access-control-allow-headers")).toBe(
      "x-api-key, content-type, idempotency-key, if-match, if-none-match, x-request-id, x-d1-bookmark, " +
        "last-event-id",
    );
    expect(res.headers.get("access-control-max-age")).toBe("86400");
    expect(res.headers.get("x-request-id")).toMatch(/\S/);
    // Answered before the rate limiter: no rate-limit headers.
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("counts against no rate-limit window: neither the key's nor the client IP's", async () => {
    const { owner } = await createOrgWithOwner();
    const ip = freshClientIp();
    for (let i = 0; i < 3; i++) {
      const res = await preflight("/v1/projects", { "cf-connecting-ip": ip, "x-api-key": owner.key });
      expect(res.status).toBe(204);
    }
    // The production limits, so the counts read are the contract's (60 per IP, 100 per key).
    const anonymous = await request("GET", "/v1/projects", {
      headers: { "cf-connecting-ip": ip },
      bindings: PRODUCTION_LIMITS,
    });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-ratelimit-remaining")).toBe("59");
    const keyed = await request("GET", "/v1/projects", { key: owner.key, bindings: PRODUCTION_LIMITS });
    expect(keyed.status).toBe(200);
    expect(keyed.headers.get("x-ratelimit-remaining")).toBe("99");
  });

  it("an OPTIONS with either Origin or Access-Control-Request-Method is answered so; a bare one needs a key", async () => {
    const variants: Record<string, string>[] = [
      { origin: ORIGIN },
      { "access-control-request-method": "GET" },
    ];
    for (const headers of variants) {
      const res = await request("OPTIONS", "/v1/projects", { headers });
      expect(res.status, JSON.stringify(headers)).toBe(204);
      expectCors(res);
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE");
    }
    const bare = await request("OPTIONS", "/v1/projects");
    expect(bare.status).toBe(401);
    expectCors(bare);
  });
});

describe("actual requests", () => {
  it("a success, a 400, a 404 and a 401 under /v1 all carry the CORS headers", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const ok = await request("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { origin: ORIGIN },
    });
    expect(ok.status).toBe(200);
    expectCors(ok);
    const bad = await request("GET", "/v1/projects/not-an-id", { key: owner.key });
    expect(bad.status).toBe(400);
    expectCors(bad);
    const missing = await request("GET", "/v1/nothing", { key: owner.key });
    expect(missing.status).toBe(404);
    expectCors(missing);
    const unauthenticated = await request("GET", "/v1/projects", { headers: { origin: ORIGIN } });
    expect(unauthenticated.status).toBe(401);
    expectCors(unauthenticated);
  });

  it("a 429 carries them too, so a browser can read Retry-After", async () => {
    const ip = freshClientIp();
    let res: ApiResponse | undefined;
    for (let i = 0; i < 61; i++) {
      res = await request("GET", "/v1/projects", {
        headers: { "cf-connecting-ip": ip, origin: ORIGIN },
        bindings: PRODUCTION_LIMITS,
      });
    }
    expect(res?.status).toBe(429);
    if (res) expectCors(res);
    expect(res?.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("/openapi.json, /docs and the script /docs loads carry them", async () => {
    for (const path of ["/openapi.json", "/docs", DOCS_RENDERER_PATH]) {
      const res = await request("GET", path, { headers: { origin: ORIGIN } });
      expect(res.status, path).toBe(200);
      expectCors(res);
    }
  });
});

describe("a page can carry bookmarks and resume a stream (§22)", () => {
  it("a preflight admits X-D1-Bookmark and Last-Event-ID, and a page reads X-D1-Bookmark and Content-Location", async () => {
    const asked = await preflight("/v1/projects", {
      "access-control-request-method": "GET",
      "access-control-request-headers": "x-api-key, x-d1-bookmark, last-event-id",
    });
    const allowed = (asked.headers.get("access-control-allow-headers") ?? "").split(/,\s*/);
    expect(allowed).toEqual(expect.arrayContaining(["x-d1-bookmark", "last-event-id"]));

    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const read = await request("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { origin: ORIGIN },
    });
    const exposed = (read.headers.get("access-control-expose-headers") ?? "").split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["x-d1-bookmark", "content-location"]));
    // What the page can then read and send back: a bookmark, on any response that reached D1.
    const bookmark = read.headers.get("x-d1-bookmark");
    expect(bookmark).toMatch(/\S/);
    const again = await request("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { origin: ORIGIN, "x-d1-bookmark": bookmark ?? "" },
    });
    expect(again.status).toBe(200);
  });
});

describe("/internal has no CORS", () => {
  it("an OPTIONS preflight there is not answered as one, and no response carries CORS headers", async () => {
    const pre = await preflight("/internal/v1/orgs");
    expect(pre.status).not.toBe(204);
    expectNoCors(pre);
    const withToken = await preflight("/internal/v1/orgs", { authorization: `Bearer ${env.ADMIN_TOKEN}` });
    expect(withToken.status).not.toBe(204);
    expectNoCors(withToken);
    const created = await request("POST", "/internal/v1/orgs", {
      body: { name: "cors-internal" },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, origin: ORIGIN },
    });
    expect(created.status).toBe(201);
    expectNoCors(created);
  });

  it("nor do paths outside the three", async () => {
    expectNoCors(await request("GET", "/healthz", { headers: { origin: ORIGIN } }));
    expectNoCors(await preflight("/healthz"));
  });
});
