import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  ApiError,
  createDeployClient,
  exportVariables,
  NO_ERROR_BODY,
  type Project,
  unwrap,
  unwrapData,
} from "../src/index.js";
import { json, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});
const client = (base: string) => createDeployClient({ baseUrl: base, apiKey: "dpk_test", maxAttempts: 1 });
const PROJECT = { id: "P1", name: "web" };

describe("unwrap()", () => {
  it("answers undefined for a 204 and a 304, typed so; the body of a 200", async () => {
    const fake = await startFake((req, res) => {
      if (req.method === "DELETE") return void res.writeHead(204).end();
      if (req.headers["if-none-match"] === '"v1"') return void res.writeHead(304, { etag: '"v1"' }).end();
      json(res, 200, PROJECT, { etag: '"v1"' });
    });
    close = fake.close;
    const api = client(fake.base);

    const revoked = unwrap(await api.DELETE("/v1/api-keys/{id}", { params: { path: { id: "K1" } } }));
    expect(revoked).toBeUndefined();
    expectTypeOf(revoked).toEqualTypeOf<undefined>();

    const path = { params: { path: { project_id: "P1" } } };
    const fresh = unwrap(await api.GET("/v1/projects/{project_id}", path));
    expect(fresh).toMatchObject(PROJECT);
    // A GET may answer 304 when sent with If-None-Match: the type says it may be undefined.
    expectTypeOf(fresh).toEqualTypeOf<Project | undefined>();
    const same = await api.GET("/v1/projects/{project_id}", {
      ...path,
      headers: { "if-none-match": '"v1"' },
    });
    expect(same.response.status).toBe(304);
    expect(unwrap(same)).toBeUndefined();

    // unwrapData is for calls that must bring a body: a success without one is no ApiError.
    expectTypeOf(unwrapData<Project>).returns.toEqualTypeOf<Project>();
    expect(() => unwrapData(same)).toThrow(/answered HTTP 304 without the body expected/);
    expect(() => unwrapData(same)).not.toThrow(ApiError);
  });

  it("throws the API's error as is, and an error without the API's body as no_error_body", async () => {
    const fake = await startFake((_req, res, url) => {
      if (url.pathname.endsWith("/api")) return json(res, 409, { code: "conflict", message: "Taken." });
      if (url.pathname.endsWith("/empty")) return void res.writeHead(400).end();
      if (url.pathname.endsWith("/other")) return json(res, 404, { error: "nope" });
      res.writeHead(502, { "content-type": "text/html" });
      res.end("<html><body>Bad gateway</body></html>");
    });
    close = fake.close;
    const api = client(fake.base);
    const failure = async (id: string) => {
      const result = await api.GET("/v1/projects/{project_id}", { params: { path: { project_id: id } } });
      try {
        unwrap(result);
      } catch (err) {
        return err as ApiError;
      }
      throw new Error("unwrap did not throw");
    };

    const api409 = await failure("api");
    expect(api409).toBeInstanceOf(ApiError);
    expect(api409).toMatchObject({ status: 409, body: { code: "conflict", message: "Taken." } });
    expect(api409.requestId).toBe("req-1");

    // Never a code the API did not send: a 400 without a body is not `bad_input`.
    const empty = await failure("empty");
    expect(empty).toMatchObject({ status: 400, body: { code: NO_ERROR_BODY } });
    expect(empty.body.message).toBe("HTTP 400 without an error body");
    expect(empty.body.cause).toBeUndefined();
    expect(empty.message).toBe("400 no_error_body: HTTP 400 without an error body");

    const other = await failure("other");
    expect(other).toMatchObject({ status: 404, body: { code: NO_ERROR_BODY, cause: { error: "nope" } } });
    const proxy = await failure("proxy");
    expect(proxy).toMatchObject({
      status: 502,
      body: { code: NO_ERROR_BODY, cause: "<html><body>Bad gateway</body></html>" },
    });
  });

  it("exportVariables() of an empty scope is an empty file", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "content-length": "0" });
      res.end();
    });
    close = fake.close;
    expect(await exportVariables(client(fake.base), { environment: "E1" })).toBe("");
  });
});
