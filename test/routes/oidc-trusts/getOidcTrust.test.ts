/** getOidcTrust: GET /v1/oidc-trusts/{id} (API_CONTRACT §27, §28, §12). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject, deriveKey } from "../../helpers/factories";
import { createTrust } from "../../helpers/oidc";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/oidc-trusts/{id}", () => {
  it("reads a trust with its ETag, and answers 304 to If-None-Match", async () => {
    const { owner } = await createOrgWithOwner();
    const trust = await createTrust(owner);
    const res = await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(trust);
    const etag = res.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    const again = await request("GET", `/v1/oidc-trusts/${trust.id}`, {
      key: owner.key,
      headers: { "if-none-match": etag },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get("x-ratelimit-limit")).not.toBeNull();
  });

  it("is 404 for a member's key, a key restricted to projects (§28), an unknown id and another organization", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const trust = await createTrust(owner);
    const member = await createCaller(org, "member", owner);
    const restricted = await deriveKey(owner, { project_ids: [project.id] });
    for (const caller of [member, restricted]) {
      expectError(await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: caller.key }), 404, "not_found");
    }
    expectError(await request("GET", `/v1/oidc-trusts/${UNKNOWN_ID}`, { key: owner.key }), 404, "not_found");
    const stranger = await createOrgWithOwner();
    expectError(
      await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: stranger.owner.key }),
      404,
      "not_found",
    );
    expect((await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: owner.key })).status).toBe(200);
  });

  runCommonRouteTests("GET /v1/oidc-trusts/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    const trust = await createTrust(owner);
    return { method: "GET", path: `/v1/oidc-trusts/${trust.id}`, caller: owner };
  });
});
