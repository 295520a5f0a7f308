/** internalAddOrgMember: POST /internal/v1/orgs/{org_id}/members (API_CONTRACT §9). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { expectError, TS, UNKNOWN_ID } from "../../../helpers/expect";
import { createAccount, createOrg } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/orgs/{org_id}/members", () => {
  it("adds an account with an org role", async () => {
    const org = await createOrg();
    const account = await createAccount();
    const res = await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "admin" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      org_id: org.id,
      account_id: account.id,
      role: "admin",
      created_at: expect.stringMatching(TS),
    });
    // One account may belong to several organizations.
    const other = await createOrg();
    expect(
      (await internal("POST", `/orgs/${other.id}/members`, { account_id: account.id, role: "member" }))
        .status,
    ).toBe(201);
  });

  it("unknown org 404, unknown account 400, duplicate 409, bad role or id 400", async () => {
    const org = await createOrg();
    const account = await createAccount();
    expectError(
      await internal("POST", `/orgs/${UNKNOWN_ID}/members`, { account_id: account.id, role: "member" }),
      404,
      "not_found",
    );
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: UNKNOWN_ID, role: "member" }),
      400,
      "bad_input",
      "account_id",
    );
    expect(
      (await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "member" })).status,
    ).toBe(201);
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "owner" }),
      409,
      "conflict",
    );
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "viewer" }),
      400,
      "bad_input",
      "role",
    );
    expectError(
      await internal("POST", "/orgs/nope/members", { account_id: account.id, role: "member" }),
      400,
      "bad_input",
      "org_id",
    );
  });

  runInternalRouteTests("POST /internal/v1/orgs/{org_id}/members", async () => {
    const org = await createOrg();
    const account = await createAccount();
    return {
      method: "POST",
      path: `/internal/v1/orgs/${org.id}/members`,
      body: { account_id: account.id, role: "member" },
    };
  });
});
