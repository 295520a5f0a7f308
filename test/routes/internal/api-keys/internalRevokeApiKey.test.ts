/** internalRevokeApiKey: DELETE /internal/v1/api-keys/{id} (API_CONTRACT §9 api-keys). */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import { type ErrorBody, expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { createOrgWithOwner } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

describe("DELETE /internal/v1/api-keys/{id}", () => {
  it("create → use → revoke (204) → refused; unknown key 404", async () => {
    const { org, owner } = await createOrgWithOwner();
    const created = await internal<{ id: string; key: string }>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect(created.status).toBe(201);
    expect((await request("GET", "/v1/orgs", { key: created.body.key })).status).toBe(200);
    const revoked = await internal("DELETE", `/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.raw).toBe("");
    expect(
      (
        await request("GET", "/v1/orgs", {
          key: created.body.key,
          headers: { "cf-connecting-ip": "192.0.2.77" },
        })
      ).status,
    ).toBe(401);
    expectError(await internal("DELETE", `/api-keys/${UNKNOWN_ID}`), 404, "not_found");
  });

  it("revoking an unknown key is 404", async () => {
    const res = await internal<ErrorBody>("DELETE", "/api-keys/1111111111111111111111");
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    const bad = await internal<ErrorBody>("DELETE", "/api-keys/not-an-id");
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runInternalRouteTests("DELETE /internal/v1/api-keys/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    return { method: "DELETE", path: `/internal/v1/api-keys/${owner.keyId}` };
  });
});
