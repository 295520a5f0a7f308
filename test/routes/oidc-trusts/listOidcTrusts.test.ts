/** listOidcTrusts: GET /v1/oidc-trusts (API_CONTRACT §27, §28, §4). */
import { describe, expect, it } from "vitest";
import type { OidcTrustRecord } from "../../../src/schemas/oidc";
import { request } from "../../helpers/api";
import { expectError } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject, deriveKey } from "../../helpers/factories";
import { createTrust } from "../../helpers/oidc";
import { runCommonRouteTests } from "../../helpers/security";

type Page = { data: OidcTrustRecord[]; has_more: boolean; next_page?: string };

describe("GET /v1/oidc-trusts", () => {
  it("lists the organization's trusts for an owner or admin, newest first, in keyset pages", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const made = [await createTrust(owner), await createTrust(admin), await createTrust(owner)];
    const { owner: stranger } = await createOrgWithOwner();
    await createTrust(stranger);

    const all = await request<Page>("GET", "/v1/oidc-trusts", { key: admin.key });
    expect(all.status).toBe(200);
    expect(all.body.data.map((t) => t.id)).toEqual(made.map((t) => t.id).reverse());
    expect(all.headers.get("etag")).toMatch(/^W\//);

    const first = await request<Page>("GET", "/v1/oidc-trusts?limit=2&sort_by=created_at", {
      key: owner.key,
    });
    expect(first.body.has_more).toBe(true);
    const second = await request<Page>(
      "GET",
      `/v1/oidc-trusts?limit=2&sort_by=created_at&after=${encodeURIComponent(first.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect([...first.body.data, ...second.body.data].map((t) => t.id)).toEqual(made.map((t) => t.id));
    expect(second.body.has_more).toBe(false);
    expect(second.body.next_page).toBeUndefined();
    const otherOrder = await request(
      "GET",
      `/v1/oidc-trusts?after=${encodeURIComponent(first.body.next_page ?? "")}`,
      {
        key: owner.key,
      },
    );
    expectError(otherOrder, 400, "bad_input", "after");
  });

  it("shows a member's key, and a key restricted to projects (§28), none", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    await createTrust(owner);
    const member = await createCaller(org, "member", owner);
    const restricted = await deriveKey(owner, { project_ids: [project.id] });
    for (const caller of [member, restricted]) {
      const res = await request<Page>("GET", "/v1/oidc-trusts", { key: caller.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], has_more: false });
    }
  });

  it("needs api-keys:read", async () => {
    const { owner } = await createOrgWithOwner();
    const key = await deriveKey(owner, { scopes: ["projects:read"] });
    expectError(await request("GET", "/v1/oidc-trusts", { key: key.key }), 403, "forbidden");
  });

  runCommonRouteTests(
    "GET /v1/oidc-trusts",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "GET", path: "/v1/oidc-trusts", caller: owner };
    },
    { otherOrgStatus: 200 },
  );
});
