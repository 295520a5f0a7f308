/** The error model and cross-cutting HTTP behaviour (API_CONTRACT §6, §9 auth). */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/app";
import { ERROR_CODES } from "../src/http/errors";
import { type ApiResponse, request } from "./helpers/api";
import { createOrgWithOwner, createProject, unique } from "./helpers/factories";
import { captureLogs } from "./helpers/logs";
import { checkedRequest } from "./helpers/openapi";

type ErrorBody = { code: string; message: string; cause?: unknown };
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MIB = 1024 * 1024;

/** Every failure answers exactly `{code, message, cause?}` with one of the ten codes. */
function expectError(res: ApiResponse<unknown>, status: number, code: string) {
  expect(res.status, res.raw).toBe(status);
  const body = res.body as ErrorBody;
  expect(body.code).toBe(code);
  expect(ERROR_CODES).toContain(body.code);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(body)) expect(["code", "message", "cause"]).toContain(key);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(REQUEST_ID);
}

/** A raw request to the Worker: any body bytes, any headers. */
async function raw(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: BodyInit } = {},
): Promise<ApiResponse<unknown>> {
  const res = await exports.default.fetch(
    new Request(`http://api.test${path}`, { method, headers: init.headers, body: init.body }),
  );
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers, raw: text };
}

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
    expectError(res, 401, "unauthenticated");
  });

  it("even a body that is not JSON, or too large, is 401 without a key", async () => {
    const notJson = await raw("POST", "/v1/projects", {
      headers: { "content-type": "text/plain" },
      body: "{nope",
    });
    expectError(notJson, 401, "unauthenticated");
    const huge = await raw("POST", "/v1/projects", {
      headers: { "content-type": "application/json" },
      body: `{"name":"${"x".repeat(2 * MIB)}"}`,
    });
    expectError(huge, 401, "unauthenticated");
  });
});

describe("unknown paths and methods", () => {
  it.each([
    ["/nothing"],
    ["/v2/projects"],
    ["/V1/projects"],
    ["/v1x/projects"],
    ["/internal"],
    ["/openapi.json/x"],
  ])("GET %s → 404 not_found", async (path) => {
    expectError(await raw("GET", path), 404, "not_found");
  });

  it("unsupported methods outside /v1 are 404 not_found", async () => {
    for (const [method, path] of [
      ["POST", "/openapi.json"],
      ["DELETE", "/docs"],
      ["PUT", "/healthz"],
      ["POST", "/"],
    ] as const) {
      expectError(await raw(method, path), 404, "not_found");
    }
  });

  it("unknown /v1 paths and unsupported methods on known paths are 404 not_found with a key", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    for (const [method, path] of [
      ["DELETE", "/v1/orgs"],
      ["PUT", "/v1/orgs"],
      ["PUT", "/v1/projects"],
      ["DELETE", "/v1/projects"],
      ["POST", `/v1/projects/${project.id}`],
      ["PATCH", `/v1/projects/${project.id}`],
      ["GET", `/v1/projects/${project.id}/disconnect`],
      ["GET", "/v1/nothing"],
      ["GET", "/v1/projects/"],
    ] as const) {
      const res = await request(method, path, { key: owner.key });
      expectError(res, 404, "not_found");
    }
    // Nothing happened to the project.
    const still = await checkedRequest<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(still.body.connection_status).toBe("connected");
  });
});

describe("x-request-id", () => {
  it.each([["abc"], ["A.b_c:d-9"], ["x".repeat(128)], ["0"]])(
    "echoes a well-formed incoming id %s",
    async (id) => {
      const { owner } = await createOrgWithOwner();
      for (const res of [
        await request("GET", "/v1/orgs", { key: owner.key, headers: { "x-request-id": id } }),
        await raw("GET", "/v1/orgs", { headers: { "x-request-id": id } }),
        await raw("GET", "/nowhere", { headers: { "x-request-id": id } }),
        await raw("GET", "/openapi.json", { headers: { "x-request-id": id } }),
      ]) {
        expect(res.headers.get("x-request-id")).toBe(id);
      }
    },
  );

  it.each([["x".repeat(129)], ["has space"], ["slash/es"], ["é"], ["semi;colon"], ["a,b"], ["<script>"]])(
    "replaces a malformed incoming id %j",
    async (id) => {
      const res = await raw("GET", "/nowhere", { headers: { "x-request-id": id } });
      const echoed = res.headers.get("x-request-id");
      expect(echoed).toMatch(REQUEST_ID);
      expect(echoed).not.toBe(id);
    },
  );

  it("makes a fresh id for every response that brings none, success or failure", async () => {
    const { owner } = await createOrgWithOwner();
    const responses = [
      await request("GET", "/v1/orgs", { key: owner.key }),
      await request("GET", "/v1/orgs", { key: owner.key }),
      await request("POST", "/v1/projects", { key: owner.key, body: { bad: 1 } }),
      await raw("GET", "/v1/orgs", {}),
      await raw("GET", "/nowhere"),
      await raw("GET", "/healthz"),
      await raw("POST", "/internal/v1/orgs", { body: "{}" }),
    ];
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("request bodies", () => {
  /** `{"name":"<name>"}` padded with JSON whitespace to exactly `size` bytes. */
  const padded = (name: string, size: number) => {
    const json = JSON.stringify({ name });
    return json + " ".repeat(size - json.length);
  };

  it("accepts a body of exactly 1 MiB and refuses 1 MiB + 1 byte", async () => {
    const { owner } = await createOrgWithOwner();
    const headers = { "x-api-key": owner.key, "content-type": "application/json" };
    const name = unique("edge");
    const exact = await raw("POST", "/v1/projects", { headers, body: padded(name, MIB) });
    expect(exact.status, exact.raw).toBe(201);
    const over = await raw("POST", "/v1/projects", { headers, body: padded(unique("edge"), MIB + 1) });
    expectError(over, 400, "bad_input");
    expect(over.body).toMatchObject({ message: expect.stringMatching(/exceeds/) });
  });

  it("refuses an oversized body that arrives as a stream without content-length", async () => {
    const { owner } = await createOrgWithOwner();
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"s"}'));
        if (sent > MIB + 128 * 1024) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.byteLength;
      },
    });
    const res = await raw("POST", "/v1/projects", {
      headers: { "x-api-key": owner.key, "content-type": "application/json" },
      body: stream,
    });
    expectError(res, 400, "bad_input");
  });

  it.each([
    ["text/plain"],
    ["application/x-www-form-urlencoded"],
    ["multipart/form-data; boundary=x"],
    ["application/jsonx"],
    ["application/xml"],
  ])("refuses content-type %s with 400 bad_input", async (type) => {
    const { owner } = await createOrgWithOwner();
    const res = await raw("POST", "/v1/projects", {
      headers: { "x-api-key": owner.key, "content-type": type },
      body: JSON.stringify({ name: unique("p") }),
    });
    expectError(res, 400, "bad_input");
  });

  it("refuses a JSON body sent without content-type; accepts parameters and any letter case", async () => {
    const { owner } = await createOrgWithOwner();
    const none = await exports.default.fetch(
      new Request("http://api.test/v1/projects", {
        method: "POST",
        headers: { "x-api-key": owner.key },
        body: new TextEncoder().encode(JSON.stringify({ name: unique("p") })),
      }),
    );
    expect(none.status).toBe(400);
    for (const type of ["application/json; charset=utf-8", "Application/JSON"]) {
      const res = await raw("POST", "/v1/projects", {
        headers: { "x-api-key": owner.key, "content-type": type },
        body: JSON.stringify({ name: unique("p") }),
      });
      expect(res.status, type).toBe(201);
    }
  });

  it.each([
    ["truncated", "{nope"],
    ["a trailing comma", '{"name":"x",}'],
    ["single quotes", "{'name':'x'}"],
    ["two documents", '{"name":"x"}{"name":"y"}'],
    ["an empty body", ""],
    ["whitespace only", "   "],
  ])("refuses malformed JSON (%s) with 400 bad_input", async (_what, body) => {
    const { owner } = await createOrgWithOwner();
    const res = await raw("POST", "/v1/projects", {
      headers: { "x-api-key": owner.key, "content-type": "application/json" },
      body,
    });
    expectError(res, 400, "bad_input");
  });

  it("refuses invalid UTF-8 with 400 bad_input", async () => {
    const { owner } = await createOrgWithOwner();
    const bytes = new Uint8Array([
      ...new TextEncoder().encode('{"name":"'),
      0xff,
      0xfe,
      ...new TextEncoder().encode('"}'),
    ]);
    const res = await raw("POST", "/v1/projects", {
      headers: { "x-api-key": owner.key, "content-type": "application/json" },
      body: bytes,
    });
    expectError(res, 400, "bad_input");
  });

  it.each([["[]"], ['"name"'], ["null"], ["42"], ["true"]])(
    "refuses the JSON value %s where an object is due",
    async (body) => {
      const { owner } = await createOrgWithOwner();
      const res = await raw("POST", "/v1/projects", {
        headers: { "x-api-key": owner.key, "content-type": "application/json" },
        body,
      });
      expectError(res, 400, "bad_input");
    },
  );

  it("an unknown field is 400 bad_input with cause [{path, message}], at its own path", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await checkedRequest<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: unique("p"), colour: "red", size: 1 },
    });
    expectError(res, 400, "bad_input");
    expect(res.body.cause).toEqual([
      { path: "colour", message: expect.any(String) },
      { path: "size", message: expect.any(String) },
    ]);
    const nested = await request<ErrorBody>("POST", "/internal/v1/accounts", {
      body: { name: "a", profile: { bio: "b", shoe_size: 44 } },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expectError(nested, 400, "bad_input");
    expect(nested.body.cause).toEqual([{ path: "profile.shoe_size", message: expect.any(String) }]);
  });

  it("a route that takes no body refuses one (every field is unknown); an empty body or {} is fine", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const disconnect = await checkedRequest<ErrorBody>("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
      body: { force: true },
    });
    expectError(disconnect, 400, "bad_input");
    expect(disconnect.body.cause).toEqual([{ path: "force", message: expect.any(String) }]);
    const notObject = await checkedRequest<ErrorBody>("DELETE", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: [1],
    });
    expectError(notObject, 400, "bad_input");
    const still = await checkedRequest<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(still.body.connection_status).toBe("connected");
    const internalDelete = await request<ErrorBody>("DELETE", `/internal/v1/api-keys/${owner.keyId}`, {
      body: { reason: "x" },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expectError(internalDelete, 400, "bad_input");
    const emptyObject = await checkedRequest("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
      body: {},
    });
    expect(emptyObject.status).toBe(204);
    expect((await checkedRequest("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(
      204,
    );
  });

  it("every invalid field is listed once in cause, with a dotted path", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const res = await checkedRequest<ErrorBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { name: "", default_environment_id: "x", icon: "nope", description: 5 },
    });
    expectError(res, 400, "bad_input");
    const cause = res.body.cause as Array<{ path: string; message: string }>;
    expect(cause.map((c) => c.path).sort()).toEqual([
      "default_environment_id",
      "description",
      "icon",
      "name",
    ]);
    for (const item of cause) expect(Object.keys(item).sort()).toEqual(["message", "path"]);
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
      expectError(res, 401, "unauthenticated");
    }
  });

  it("guards internal bodies like public ones: JSON only", async () => {
    const auth = `Bearer ${env.ADMIN_TOKEN}`;
    const wrongType = await raw("POST", "/internal/v1/orgs", {
      headers: { authorization: auth, "content-type": "text/plain" },
      body: JSON.stringify({ name: "x" }),
    });
    expectError(wrongType, 400, "bad_input");
    const broken = await raw("POST", "/internal/v1/orgs", {
      headers: { authorization: auth, "content-type": "application/json" },
      body: "{",
    });
    expectError(broken, 400, "bad_input");
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
    const app = createApp();
    for (const token of ["", undefined]) {
      const bindings = { ...env, ADMIN_TOKEN: token } as unknown as Env;
      for (const [method, path, authorization] of [
        ["POST", "/internal/v1/orgs", "Bearer "],
        ["POST", "/internal/v1/orgs", `Bearer ${env.ADMIN_TOKEN}`],
        ["POST", "/internal/v1/accounts", undefined],
        ["DELETE", "/internal/v1/api-keys/1111111111111111111111", "Bearer x"],
        ["GET", "/internal/v1/nothing", undefined],
      ] as const) {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (authorization) headers.authorization = authorization;
        const ctx = createExecutionContext();
        const res = await app.fetch(
          new Request(`http://api.test${path}`, {
            method,
            headers,
            body: method === "POST" ? '{"name":"x"}' : undefined,
          }),
          bindings,
          ctx,
        );
        await waitOnExecutionContext(ctx);
        const text = await res.text();
        expectError(
          { status: res.status, body: JSON.parse(text), headers: res.headers, raw: text },
          404,
          "not_found",
        );
      }
    }
  });
});

describe("uncaught exceptions", () => {
  // Each is logged as an error by design; these tests throw them on purpose.
  const errors = captureLogs("error");
  const SECRET = "d1-internal-detail-7f3a";
  const brokenDb = () => {
    const fail = () => {
      throw new Error(`${SECRET}: the database is on fire`);
    };
    return { prepare: fail, batch: fail, exec: fail, dump: fail, withSession: fail } as unknown as D1Database;
  };

  async function callBroken(method: string, path: string, headers: Record<string, string>, body?: string) {
    const ctx = createExecutionContext();
    const res = await createApp().fetch(
      new Request(`http://api.test${path}`, { method, headers, body }),
      { ...env, DB: brokenDb() },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as unknown, headers: res.headers, raw: text };
  }

  it("become 500 internal without internals, on /v1 and on the internal API", async () => {
    const { owner } = await createOrgWithOwner();
    const cases = [
      await callBroken("GET", "/v1/projects", { "x-api-key": owner.key }),
      await callBroken("GET", "/v1/projects", { "x-api-key": `dpk_${"Z".repeat(43)}` }),
      await callBroken(
        "POST",
        "/internal/v1/orgs",
        { authorization: `Bearer ${env.ADMIN_TOKEN}`, "content-type": "application/json" },
        JSON.stringify({ name: "x" }),
      ),
    ];
    for (const res of cases) {
      expectError(res, 500, "internal");
      expect(res.body).toEqual({ code: "internal", message: expect.any(String) });
      expect(res.raw).not.toContain(SECRET);
      expect(res.raw).not.toMatch(/fire|stack|at \w+ \(|Error/);
    }
    const withId = await callBroken("GET", "/v1/orgs", {
      "x-api-key": owner.key,
      "x-request-id": "trace-500",
    });
    expect(withId.headers.get("x-request-id")).toBe("trace-500");
    const logged = errors.lines().filter((line) => line.msg === "unhandled error");
    expect(logged.map((line) => line.request_id)).toContain("trace-500");
    expect(JSON.stringify(logged)).toContain("the database is on fire");
  });
});
