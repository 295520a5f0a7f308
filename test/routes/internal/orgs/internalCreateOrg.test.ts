/** internalCreateOrg: POST /internal/v1/orgs (API_CONTRACT §9). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { expectError, NEW_ID, TS } from "../../../helpers/expect";
import { unique } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/orgs", () => {
  it("creates an organization", async () => {
    const res = await internal("POST", "/orgs", { name: "Acme" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      name: "Acme",
      created_at: expect.stringMatching(TS),
    });
  });

  it.each([[{}], [{ name: "" }], [{ name: "x".repeat(101) }], [{ name: 1 }], [{ name: "a", plan: "pro" }]])(
    "refuses %j with 400",
    async (body) => {
      expectError(await internal("POST", "/orgs", body), 400, "bad_input");
    },
  );

  runInternalRouteTests("POST /internal/v1/orgs", async () => ({
    method: "POST",
    path: "/internal/v1/orgs",
    body: { name: unique("org") },
  }));
});
