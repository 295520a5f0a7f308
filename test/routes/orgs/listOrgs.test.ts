/** listOrgs: GET /v1/orgs (API_CONTRACT §3 Organization, §5, §10). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, type Org } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type OrgList = { data: Org[]; has_more: boolean; next_page?: string };

describe("GET /v1/orgs", () => {
  it("lists the caller's organization, one page, for any org role", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    const admin = await createCaller(org, "admin");
    await createOrgWithOwner(); // another organization, never listed
    for (const caller of [owner, admin, member]) {
      const res = await request<OrgList>("GET", "/v1/orgs", { key: caller.key });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [org], has_more: false });
    }
  });

  it("validates the list parameters", async () => {
    const { owner } = await createOrgWithOwner();
    for (const query of ["limit=0", "limit=241", "sort_by=name", "after=%%%", `after=${btoa("{}")}`]) {
      const res = await request<ErrorBody>("GET", `/v1/orgs?${query}`, { key: owner.key });
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe("bad_input");
    }
    const ok = await request<OrgList>("GET", "/v1/orgs?limit=1&sort_by=%2Bcreated_at", {
      key: owner.key,
    });
    expect(ok.body.data).toHaveLength(1);
  });

  runCommonRouteTests(
    "GET /v1/orgs",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "GET", path: "/v1/orgs", caller: owner };
    },
    { otherOrgStatus: 200 },
  );
});
