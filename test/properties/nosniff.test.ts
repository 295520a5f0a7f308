/**
 * Every response carries `X-Content-Type-Options: nosniff` (API_CONTRACT §22): a browser never
 * reads an answer of this service as another type than it says (a JSON error as a script or a
 * page). `request` checks it on every response any test receives (test/helpers/api.ts); this
 * file calls each kind of answer once by name: the ones no other test is about.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DOCS_RENDERER_PATH } from "../../src/openapi/routes";
import { request } from "../helpers/api";
import { createOrgWithOwner, createProject } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";

const nosniff = (res: { headers: Headers }) => res.headers.get("x-content-type-options");

const brokenDb = {
  withSession: () => {
    throw new Error("D1 is down");
  },
} as unknown as D1Database;

describe("X-Content-Type-Options: nosniff", () => {
  const errors = captureLogs("error");

  it("on the document, the docs page and its script, the preflight, /healthz, / and unknown paths", async () => {
    const answers = [
      await request("GET", "/openapi.json"),
      await request("GET", "/docs"),
      await request("GET", DOCS_RENDERER_PATH),
      await request("OPTIONS", "/v1/projects", { headers: { origin: "https://app.example.org" } }),
      await request("GET", "/healthz"),
      await request("GET", "/"),
      await request("GET", "/nowhere"),
      await request("DELETE", "/openapi.json"),
    ];
    expect(answers.map((res) => [res.status, nosniff(res)])).toEqual([
      [200, "nosniff"],
      [200, "nosniff"],
      [200, "nosniff"],
      [204, "nosniff"],
      [200, "nosniff"],
      [200, "nosniff"],
      [404, "nosniff"],
      [404, "nosniff"],
    ]);
  });

  it("on /v1 answers: a record, a 304, a 400, a 401 and a 404", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const read = await request("GET", `/v1/projects/${project.id}`, { key: owner.key });
    const etag = read.headers.get("etag") ?? "";
    const answers = [
      read,
      await request("GET", `/v1/projects/${project.id}`, {
        key: owner.key,
        headers: { "if-none-match": etag },
      }),
      await request("GET", "/v1/projects/not-an-id", { key: owner.key }),
      await request("GET", "/v1/projects"),
      await request("GET", "/v1/nothing-here", { key: owner.key }),
    ];
    expect(answers.map((res) => [res.status, nosniff(res)])).toEqual([
      [200, "nosniff"],
      [304, "nosniff"],
      [400, "nosniff"],
      [401, "nosniff"],
      [404, "nosniff"],
    ]);
  });

  it("on the internal API, and on a 500", async () => {
    const { owner } = await createOrgWithOwner();
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const answers = [
      await request("POST", "/internal/v1/orgs", { body: { name: "nosniff" }, headers: admin }),
      await request("POST", "/internal/v1/orgs", { body: { name: "nosniff" } }),
      await request("POST", "/internal/v1/orgs", {
        body: { name: "x" },
        headers: admin,
        bindings: { ADMIN_TOKEN: "" },
      }),
      // A D1 binding that fails every session: the error boundary answers.
      await request("GET", "/v1/orgs", { key: owner.key, bindings: { DB: brokenDb } }),
    ];
    expect(answers.map((res) => [res.status, nosniff(res)])).toEqual([
      [201, "nosniff"],
      [401, "nosniff"],
      [404, "nosniff"],
      [500, "nosniff"],
    ]);
    expect(errors.lines().map((line) => line.msg)).toEqual(["unhandled error"]);
  });
});
