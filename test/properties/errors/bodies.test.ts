/** Request bodies: JSON only, strict, bounded, refused before anything changes. */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectErrorResponse, MIB, raw } from "../../helpers/errors";
import type { ErrorBody } from "../../helpers/expect";
import { createOrgWithOwner, createProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";

describe("request bodies", () => {
  const errors = captureLogs("error");
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
    expectErrorResponse(over, 400, "bad_input");
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
    expectErrorResponse(res, 400, "bad_input");
  });

  /** A streamed body (no content-length): `{"name":"s"}`, then 64 KiB chunks of spaces until `endAt` bytes. */
  const source = (endAt: number, pause = 0) => {
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    const seen = { sent: 0, closed: false, cancelled: false };
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (seen.sent === 0) controller.enqueue(new TextEncoder().encode('{"name":"s"}'));
        if (pause) await scheduler.wait(pause);
        if (seen.sent >= endAt) {
          seen.closed = true;
          return controller.close();
        }
        controller.enqueue(chunk);
        seen.sent += chunk.byteLength;
      },
      cancel() {
        seen.cancelled = true;
      },
    });
    return { stream, seen };
  };

  // Stopping mid-upload left `wrangler dev`'s connection unusable: it answered a plain-text 503
  // "Your worker restarted mid-request" in place of the 400. A refused body is read to its end.
  it("reads a refused streamed body to its end, however large, and answers the JSON 400", async () => {
    const { owner } = await createOrgWithOwner();
    const headers = { "x-api-key": owner.key, "content-type": "application/json" };
    for (const size of [MIB + 256 * 1024, 24 * MIB]) {
      const body = source(size);
      const res = await raw("POST", "/v1/projects", { headers, body: body.stream });
      expectErrorResponse(res, 400, "bad_input");
      expect(res.body).toMatchObject({ message: expect.stringMatching(/exceeds 1048576 bytes/) });
      expect(body.seen).toMatchObject({ closed: true, cancelled: false });
    }
  });

  /** The same Worker with a body deadline of `ms` (REQUEST_BODY_TIMEOUT_MS, src/config.ts). */
  const deadline = (ms: number) => ({ REQUEST_BODY_TIMEOUT_MS: String(ms) });

  it("cuts off a body still arriving when its time is up: 400 once over the limit", async () => {
    const { owner } = await createOrgWithOwner();
    const endless = source(Number.POSITIVE_INFINITY, 1);
    const res = await request("POST", "/v1/projects", {
      key: owner.key,
      rawBody: endless.stream,
      headers: { "content-type": "application/json" },
      bindings: deadline(800),
    });
    expectErrorResponse(res, 400, "bad_input");
    expect(endless.seen.cancelled).toBe(true);
    expect(endless.seen.sent).toBeGreaterThan(MIB);
  });

  it("a body that trickles in is 408 timeout once its time is up, and nothing is created", async () => {
    const { owner } = await createOrgWithOwner();
    const name = unique("trickle");
    let cancelled = false;
    const trickle = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(`{"name":"${name}"`));
      },
      async pull(controller) {
        await scheduler.wait(20);
        controller.enqueue(new TextEncoder().encode(" "));
      },
      cancel() {
        cancelled = true;
      },
    });
    const started = Date.now();
    const res = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: trickle,
      headers: { "content-type": "application/json", "idempotency-key": unique("trickle") },
      bindings: deadline(300),
    });
    expectErrorResponse(res, 408, "timeout");
    expect(res.body.message).toMatch(/within 0.3 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(cancelled).toBe(true);
    const list = await request<{ data: { name: string }[] }>("GET", "/v1/projects?limit=240", {
      key: owner.key,
    });
    expect(list.body.data.map((p) => p.name)).not.toContain(name);
  });

  it("a body its client stops sending midway is 400, not a 500 logged as an unhandled error", async () => {
    const { owner } = await createOrgWithOwner();
    const broken = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"cut'));
      },
      async pull(controller) {
        await scheduler.wait(5);
        controller.error(new Error("client went away"));
      },
    });
    // Handed to the app in this isolate (`bindings`), so the stream's error reaches its reader as a
    // broken client connection does under `wrangler dev` (through `exports.default.fetch` an
    // errored stream arrives as a body that simply ends: not JSON, 400 as well).
    const res = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      rawBody: broken,
      headers: { "content-type": "application/json" },
      bindings: {},
    });
    expectErrorResponse(res, 400, "bad_input");
    expect(res.body.message).toMatch(/ended before it was complete/);
    expect(errors.lines()).toEqual([]);
  });

  it.each([
    ["text/plain"],
    ["application/x-www-form-urlencoded"],
    ["multipart/form-data; boundary=x"],
    ["application/jsonx"],
    ["application/xml"],
  ])(
    "refuses content-type %s with 400 bad_input, naming the header, with a body or an empty one",
    async (type) => {
      const { owner } = await createOrgWithOwner();
      // With a body the body guard refuses it; empty, the operation's validator (a body is required).
      for (const body of [JSON.stringify({ name: unique("p") }), ""]) {
        const res = await raw("POST", "/v1/projects", {
          headers: { "x-api-key": owner.key, "content-type": type },
          body,
        });
        expectErrorResponse(res, 400, "bad_input");
        expect((res.body as ErrorBody).cause, `${type} ${JSON.stringify(body)}`).toEqual([
          { path: "header.content-type", message: `Expected application/json, got ${type}.` },
        ]);
      }
    },
  );

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
    expectErrorResponse(res, 400, "bad_input");
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
    expectErrorResponse(res, 400, "bad_input");
  });

  it.each([["[]"], ['"name"'], ["null"], ["42"], ["true"]])(
    "refuses the JSON value %s where an object is due",
    async (body) => {
      const { owner } = await createOrgWithOwner();
      const res = await raw("POST", "/v1/projects", {
        headers: { "x-api-key": owner.key, "content-type": "application/json" },
        body,
      });
      expectErrorResponse(res, 400, "bad_input");
    },
  );

  it("an unknown field is 400 bad_input with cause [{path, message}], at its own path", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: unique("p"), colour: "red", size: 1 },
    });
    expectErrorResponse(res, 400, "bad_input");
    expect(res.body.cause).toEqual([
      { path: "colour", message: expect.any(String) },
      { path: "size", message: expect.any(String) },
    ]);
    const nested = await request<ErrorBody>("POST", "/internal/v1/accounts", {
      body: { name: "a", profile: { bio: "b", shoe_size: 44 } },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expectErrorResponse(nested, 400, "bad_input");
    expect(nested.body.cause).toEqual([{ path: "profile.shoe_size", message: expect.any(String) }]);
  });

  it("a route that takes no body refuses one (every field is unknown); an empty body or {} is fine", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const disconnect = await request<ErrorBody>("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
      body: { force: true },
    });
    expectErrorResponse(disconnect, 400, "bad_input");
    expect(disconnect.body.cause).toEqual([{ path: "force", message: expect.any(String) }]);
    const notObject = await request<ErrorBody>("DELETE", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: [1],
    });
    expectErrorResponse(notObject, 400, "bad_input");
    const still = await request<{ connection_status: string }>("GET", `/v1/projects/${project.id}`, {
      key: owner.key,
    });
    expect(still.body.connection_status).toBe("connected");
    const internalDelete = await request<ErrorBody>("DELETE", `/internal/v1/api-keys/${owner.keyId}`, {
      body: { reason: "x" },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
    });
    expectErrorResponse(internalDelete, 400, "bad_input");
    const emptyObject = await request("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
      body: {},
    });
    expect(emptyObject.status).toBe(204);
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
  });

  it("every invalid field is listed once in cause, with a dotted path", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const res = await request<ErrorBody>("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { name: "", default_environment_id: "x", icon: "nope", description: 5 },
    });
    expectErrorResponse(res, 400, "bad_input");
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
