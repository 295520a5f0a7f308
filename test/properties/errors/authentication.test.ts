/** Authentication comes first: on /v1 (API key) and on the internal API (admin token). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectErrorResponse, MIB, raw } from "../../helpers/errors";
import { unique } from "../../helpers/factories";

describe("authentication comes first on /v1", () => {
  const paths: Array<[string, string]> = [
    ["GET", "/v1"],
    ["GET", "/v1/"],
    ["GET", "/v1/projects"],
    ["POST", "/v1/projects"],
    ["GET", "/v1/projects/1111111111111111111111"],
    ["GET", "/v1/projects/not-an-id"],
    ["DELETE", "/v1/orgs"],
    ["GET", "/v1/nothing/here"],
    ["PUT", "/v1/unknown"],
    ["OPTIONS", "/v1/projects"],
    ["GET", "/v1/orgs/1111111111111111111111/projects?limit=0"],
  ];
  it.each(paths)("%s %s without a key → 401 with x-request-id", async (method, path) => {
    const res = await raw(method, path, {});
    expectErrorResponse(res, 401, "unauthenticated");
    // RFC 9110 §11.6.1: a 401 names the scheme that would authenticate.
    expect(res.headers.get("www-authenticate")).toBe(
      'ApiKey realm="deploy-platform-api", header="x-api-key"',
    );
  });

  it("even a body that is not JSON, or too large, is 401 without a key", async () => {
    const notJson = await raw("POST", "/v1/projects", {
      headers: { "content-type": "text/plain" },
      body: "{nope",
    });
    expectErrorResponse(notJson, 401, "unauthenticated");
    const huge = await raw("POST", "/v1/projects", {
      headers: { "content-type": "application/json" },
      body: `{"name":"${"x".repeat(2 * MIB)}"}`,
    });
    expectErrorResponse(huge, 401, "unauthenticated");
  });
});

describe("internal API authentication", () => {
  it.each([
    ["no authorization", undefined],
    ["an empty bearer", "Bearer "],
    ["a wrong token", "Bearer wrong-token"],
    ["the token with extra characters", `Bearer ${env.ADMIN_TOKEN}x`],
    ["another scheme", `Basic ${env.ADMIN_TOKEN}`],
    ["the bare token", env.ADMIN_TOKEN],
  ])("%s → 401 unauthenticated", async (_what, authorization) => {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (authorization !== undefined) headers.authorization = authorization;
    for (const [method, path] of [
      ["POST", "/internal/v1/orgs"],
      ["DELETE", "/internal/v1/api-keys/1111111111111111111111"],
      ["GET", "/internal/v1/nothing"],
    ] as const) {
      const res = await raw(method, path, { headers, body: method === "POST" ? '{"name":"x"}' : undefined });
      expectErrorResponse(res, 401, "unauthenticated");
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="deploy-platform-api internal"');
    }
  });

  it("guards internal bodies like public ones: JSON only", async () => {
    const auth = `Bearer ${env.ADMIN_TOKEN}`;
    const wrongType = await raw("POST", "/internal/v1/orgs", {
      headers: { authorization: auth, "content-type": "text/plain" },
      body: JSON.stringify({ name: "x" }),
    });
    expectErrorResponse(wrongType, 400, "bad_input");
    const broken = await raw("POST", "/internal/v1/orgs", {
      headers: { authorization: auth, "content-type": "application/json" },
      body: "{",
    });
    expectErrorResponse(broken, 400, "bad_input");
  });

  it("accepts the bearer scheme in any letter case", async () => {
    for (const scheme of ["Bearer", "bearer", "BEARER"]) {
      const res = await raw("POST", "/internal/v1/orgs", {
        headers: { authorization: `${scheme} ${env.ADMIN_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ name: unique("org") }),
      });
      expect(res.status, scheme).toBe(201);
    }
  });

  it("every /internal path is 404 when ADMIN_TOKEN is unset, whatever the credentials", async () => {
    for (const token of ["", undefined]) {
      for (const [method, path, authorization] of [
        ["POST", "/internal/v1/orgs", "Bearer "],
        ["POST", "/internal/v1/orgs", `Bearer ${env.ADMIN_TOKEN}`],
        ["POST", "/internal/v1/accounts", undefined],
        ["DELETE", "/internal/v1/api-keys/1111111111111111111111", "Bearer x"],
        ["GET", "/internal/v1/nothing", undefined],
      ] as const) {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (authorization) headers.authorization = authorization;
        const res = await request(method, path, {
          headers,
          rawBody: method === "POST" ? '{"name":"x"}' : undefined,
          bindings: { ADMIN_TOKEN: token },
        });
        expectErrorResponse(res, 404, "not_found");
      }
    }
  });
});
