/** Uncaught exceptions become 500 internal without internals. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectErrorResponse } from "../../helpers/errors";
import { createOrgWithOwner } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";

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

  const callBroken = (method: string, path: string, headers: Record<string, string>, rawBody?: string) =>
    request(method, path, { headers, rawBody, bindings: { DB: brokenDb() } });

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
      expectErrorResponse(res, 500, "internal");
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
