/** internalGetOrg: GET /internal/v1/orgs/{org_id} (API_CONTRACT §32). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { createOrgIn, ORG_DATABASES } from "../../../helpers/databases";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { runInternalRouteTests } from "../../../helpers/security";

describe("GET /internal/v1/orgs/{org_id}", () => {
  for (const database of ORG_DATABASES) {
    it(`answers the organization with database ${database}, the one that holds it`, async () => {
      const org = await createOrgIn(database);
      const res = await internal("GET", `/orgs/${org.id}`);
      expect(res.status, res.raw).toBe(200);
      expect(res.body).toEqual({ id: org.id, name: org.name, created_at: org.created_at, database });
    });
  }

  it("404 for an unknown organization", async () => {
    expectError(await internal("GET", `/orgs/${UNKNOWN_ID}`), 404, "not_found");
  });

  runInternalRouteTests("GET /internal/v1/orgs/{org_id}", async () => {
    const org = await createOrgIn("DB");
    return { method: "GET", path: `/internal/v1/orgs/${org.id}` };
  });
});
