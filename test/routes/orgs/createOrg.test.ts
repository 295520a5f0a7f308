/** createOrg: POST /v1/orgs (API_CONTRACT §3 Organization, §5, §10). */
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, type Org, unique } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type OrgList = { data: Org[]; has_more: boolean; next_page?: string };
const LONE = "\uD800";

describe("POST /v1/orgs", () => {
  it("creates an organization whose owner is the caller's account", async () => {
    const { org, owner } = await createOrgWithOwner();
    const member = await createCaller(org, "member", owner);
    for (const caller of [owner, member]) {
      const name = unique("new-org");
      const res = await request<Org>("POST", "/v1/orgs", { key: caller.key, body: { name } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: expect.any(String), name, created_at: expect.stringMatching(TS) });
      expect(res.body.id).not.toBe(org.id);

      // Only an owner or admin of the new organization may issue a key in it: the caller can.
      const key = await internal<{ key: string }>("POST", `/orgs/${res.body.id}/api-keys`, {
        account_id: caller.accountId,
        created_by: caller.accountId,
      });
      expect(key.status, key.raw).toBe(201);
      const listed = await request<OrgList>("GET", "/v1/orgs", { key: key.body.key });
      expect(listed.body.data).toEqual([res.body]);
      // As its owner the caller may create projects there.
      const project = await request("POST", "/v1/projects", {
        key: key.body.key,
        body: { name: unique("p") },
      });
      expect(project.status).toBe(201);

      // The caller's own key still acts in the old organization.
      const old = await request<OrgList>("GET", "/v1/orgs", { key: caller.key });
      expect(old.body.data).toEqual([org]);
    }
  });

  it("allows names of 1 to 100 characters, duplicates included", async () => {
    const { owner } = await createOrgWithOwner();
    for (const name of ["a", "x".repeat(100), "Acme", "Acme", "🚀 Rocket Co."]) {
      const res = await request<Org>("POST", "/v1/orgs", { key: owner.key, body: { name } });
      expect(res.status, name).toBe(201);
      expect(res.body.name).toBe(name);
    }
  });

  it.each([
    [{}, "name"],
    [{ name: "" }, "name"],
    [{ name: "x".repeat(101) }, "name"],
    [{ name: 42 }, "name"],
    [{ name: null }, "name"],
    [{ name: "ok", owner: "me" }, "owner"],
  ])("refuses %j with 400 bad_input naming %s", async (body, path) => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("POST", "/v1/orgs", { key: owner.key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toEqual([path]);
  });

  it("refuses an unpaired surrogate in an organization name", async () => {
    const { owner } = await createOrgWithOwner();
    const org = await request("POST", "/v1/orgs", { key: owner.key, body: { name: `o${LONE}` } });
    expect(org.status, org.raw).toBe(400);
    expect(org.body).toMatchObject({ code: "bad_input", cause: [{ path: "name" }] });
  });

  runCommonRouteTests(
    "POST /v1/orgs",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "POST", path: "/v1/orgs", body: { name: unique("o") }, caller: owner };
    },
    { otherOrgStatus: 201 },
  );
});
