/** listApiKeys: GET /v1/api-keys, the keys the caller may see (API_CONTRACT §21, §4). */
import { describe, expect, it } from "vitest";
import type { ApiKeyInfo } from "../../../src/schemas/organization";
import { request } from "../../helpers/api";
import { expectError } from "../../helpers/expect";
import {
  createApiKey,
  createCaller,
  createOrgWithOwner,
  deriveKey,
  revokeKey,
} from "../../helpers/factories";
import { byCreated, walkPages } from "../../helpers/pages";
import { runCommonRouteTests } from "../../helpers/security";

type KeyList = { data: ApiKeyInfo[]; has_more: boolean; next_page?: string };
const list = (key: string, query = "") => request<KeyList>("GET", `/v1/api-keys${query}`, { key });

/** An organization with keys of three accounts: the owner's (one made by a key, one revoked), an admin's, a member's. */
async function keyWorld() {
  const { org, owner } = await createOrgWithOwner();
  const admin = await createCaller(org, "admin");
  const member = await createCaller(org, "member", owner);
  const made = await deriveKey(owner, { name: "made", scopes: ["projects:read"] });
  const revoked = await createApiKey(owner, { name: "revoked" });
  await revokeKey(revoked.keyId);
  const memberSecond = await createApiKey(member, { name: "second" }, owner);
  return { org, owner, admin, member, made, revoked, memberSecond };
}

describe("GET /v1/api-keys", () => {
  it("an owner or admin sees every key of the organization, revoked ones with revoked_at, never a key", async () => {
    const w = await keyWorld();
    const all = [
      w.owner.keyId,
      w.admin.keyId,
      w.member.keyId,
      w.made.keyId,
      w.revoked.keyId,
      w.memberSecond.keyId,
    ];
    for (const caller of [w.owner, w.admin]) {
      const res = await list(caller.key, "?limit=240");
      expect(res.status).toBe(200);
      expect(res.body.data.map((k) => k.id).sort()).toEqual([...all].sort());
      // Newest first by default.
      expect(res.body.data).toEqual([...res.body.data].sort(byCreated).reverse());
      expect(res.body.data.find((k) => k.id === w.revoked.keyId)?.revoked_at).not.toBeNull();
      expect(res.body.data.find((k) => k.id === w.made.keyId)?.parent_id).toBe(w.owner.keyId);
      for (const secret of [w.owner.key, w.made.key, w.member.key])
        expect(res.raw).not.toContain(secret.slice(4));
    }
  });

  it("anyone else sees only the keys acting as its own account", async () => {
    const w = await keyWorld();
    const res = await list(w.member.key);
    expect(res.body.data.map((k) => k.id).sort()).toEqual([w.member.keyId, w.memberSecond.keyId].sort());
  });

  it("filters by account_id (a member's filter on another account is an empty page)", async () => {
    const w = await keyWorld();
    const mine = await list(w.owner.key, `?account_id=${w.member.accountId}`);
    expect(mine.body.data.map((k) => k.id).sort()).toEqual([w.member.keyId, w.memberSecond.keyId].sort());
    const admins = await list(w.owner.key, `?account_id=${w.admin.accountId}`);
    expect(admins.body.data.map((k) => k.id)).toEqual([w.admin.keyId]);
    expect((await list(w.member.key, `?account_id=${w.owner.accountId}`)).body.data).toEqual([]);
    expectError(await list(w.owner.key, "?account_id=not-an-id"), 400, "bad_input", "account_id");
  });

  it("pages through every key in either order, with cursors bound to the filter", async () => {
    const w = await keyWorld();
    const ascending = await walkPages(w.owner.key, "/v1/api-keys", "created_at", 2);
    const descending = await walkPages(w.owner.key, "/v1/api-keys", "-created_at", 4);
    expect(ascending).toHaveLength(6);
    expect(descending).toEqual([...ascending].reverse());
    const filtered = await list(w.owner.key, `?limit=1&account_id=${w.owner.accountId}`);
    expect(filtered.body.has_more).toBe(true);
    const mixed = await list(
      w.owner.key,
      `?limit=1&after=${encodeURIComponent(filtered.body.next_page ?? "")}`,
    );
    expectError(mixed, 400, "bad_input", "after");
  });

  it("another organization's keys are never listed", async () => {
    const w = await keyWorld();
    const { owner: stranger } = await createOrgWithOwner();
    const res = await list(stranger.key, `?account_id=${w.owner.accountId}`);
    expect(res.body.data).toEqual([]);
    expect((await list(stranger.key)).body.data.map((k) => k.id)).toEqual([stranger.keyId]);
  });

  it("needs api-keys:read", async () => {
    const { owner } = await createOrgWithOwner();
    const reader = await createApiKey(owner, { scopes: ["api-keys:read"] });
    expect((await list(reader.key)).status).toBe(200);
    const other = await createApiKey(owner, { scopes: ["api-keys:write", "projects:read"] });
    const res = await list(other.key);
    expectError(res, 403, "forbidden");
    expect(res.body).toMatchObject({ message: expect.stringContaining("`api-keys:read`") });
  });

  runCommonRouteTests(
    "GET /v1/api-keys",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "GET", path: "/v1/api-keys", caller: owner };
    },
    // Every organization's owner lists its own organization's keys.
    { otherOrgStatus: 200 },
  );
});
