/** getCurrentApiKey: GET /v1/api-keys/current, the calling key's own record (API_CONTRACT §15). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { createOrgWithOwner, deriveKey, revokeKey, scopedKey } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/api-keys/current", () => {
  it("defaults to every scope and every project", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await request<{ scopes: string[]; project_ids: null }>("GET", "/v1/api-keys/current", {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.scopes).toEqual(["*"]);
    expect(res.body.project_ids).toBeNull();
  });

  it("shows parent_id: the key that made it, or null for a key of the internal API; never revoked_at", async () => {
    const { owner } = await createOrgWithOwner();
    const made = await deriveKey(owner, { scopes: ["orgs:read"] });
    const own = await request<Record<string, unknown>>("GET", "/v1/api-keys/current", { key: owner.key });
    expect(own.body.parent_id).toBeNull();
    const res = await request<Record<string, unknown>>("GET", "/v1/api-keys/current", { key: made.key });
    expect(res.body).toMatchObject({ id: made.keyId, parent_id: owner.keyId, scopes: ["orgs:read"] });
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "id",
        "name",
        "org_id",
        "account_id",
        "parent_id",
        "scopes",
        "project_ids",
        "expires_at",
        "last_used_at",
        "created_at",
        "oidc",
      ].sort(),
    );
  });

  it("needs a valid key and no scope; a revoked key is 401", async () => {
    const { owner } = await createOrgWithOwner();
    expect((await request("GET", "/v1/api-keys/current")).status).toBe(401);
    const narrow = await scopedKey(owner, { scopes: ["orgs:read"] });
    expect((await request("GET", "/v1/api-keys/current", { key: narrow.key })).status).toBe(200);
    await revokeKey(narrow.id);
    expect((await request("GET", "/v1/api-keys/current", { key: narrow.key })).status).toBe(401);
  });

  runCommonRouteTests(
    "GET /v1/api-keys/current",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "GET", path: "/v1/api-keys/current", caller: owner };
    },
    // Every key reads its own record: another organization's key gets 200, with its own.
    { otherOrgStatus: 200 },
  );
});
