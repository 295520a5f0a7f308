/**
 * `recheckAccess` (src/context.ts), built at authentication over the key's hash: what a live
 * stream asks instead of keeping the key (src/services/deployments/follow.ts). It answers as a new
 * request with the key would be answered, through the same 30 s isolate cache of keys. The stream
 * ending on it is test/properties/timeline/streams.test.ts ("a stream whose key or access ends
 * while it is open").
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { authenticate } from "../../src/services/api-keys/authenticate";
import { request } from "../helpers/api";
import { serviceContext } from "../helpers/context";
import { createOrgWithOwnerIn, d1, ORG_DATABASES } from "../helpers/databases";
import { createApiKey } from "../helpers/factories";

afterEach(() => vi.restoreAllMocks());

/** Past the isolate's cache of a key (CACHE_TTL_MS, src/services/api-keys/authenticate.ts). */
const pastTheCache = () => {
  const now = Date.now();
  vi.spyOn(Date, "now").mockReturnValue(now + 30_001);
};

describe.each(ORG_DATABASES)("recheckAccess, organization in %s", (database) => {
  it("answers the key's identity while it holds; null at once after a revocation in this isolate", async () => {
    const { owner } = await createOrgWithOwnerIn(database);
    const ci = await createApiKey(owner);
    const caller = await authenticate(serviceContext(), ci.key);
    expect(caller.identity).toMatchObject({ keyId: ci.keyId, accountId: owner.accountId, database });
    expect(await caller.recheckAccess()).toEqual(caller.identity);
    // The revoking isolate forgets the key at once (forgetKeys): no cached entry answers for it.
    expect((await request("DELETE", `/v1/api-keys/${ci.keyId}`, { key: owner.key })).status).toBe(204);
    expect(await caller.recheckAccess()).toBeNull();
  });

  it("sees another isolate's revocation once its cached entry lapses (30 s)", async () => {
    const { owner } = await createOrgWithOwnerIn(database);
    const ci = await createApiKey(owner);
    const caller = await authenticate(serviceContext(), ci.key);
    await d1(database)
      .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?")
      .bind(new Date().toISOString(), ci.keyId)
      .run();
    // Cached here, and not told: still the identity, as a new request would still be let in.
    expect((await caller.recheckAccess())?.keyId).toBe(ci.keyId);
    pastTheCache();
    expect(await caller.recheckAccess()).toBeNull();
  });

  it("answers null once the key's account is no longer a member of the organization", async () => {
    const { org, owner } = await createOrgWithOwnerIn(database);
    const caller = await authenticate(serviceContext(), owner.key);
    // No public route removes an org member yet: straight in D1, as another isolate would.
    await d1(database)
      .prepare("DELETE FROM org_members WHERE org_id = ? AND account_id = ?")
      .bind(org.id, owner.accountId)
      .run();
    pastTheCache();
    expect(await caller.recheckAccess()).toBeNull();
  });

  it("answers what the key acts as now (a changed org role), for the access check after it", async () => {
    const { org, owner } = await createOrgWithOwnerIn(database);
    const caller = await authenticate(serviceContext(), owner.key);
    await d1(database)
      .prepare("UPDATE org_members SET role = 'member' WHERE org_id = ? AND account_id = ?")
      .bind(org.id, owner.accountId)
      .run();
    pastTheCache();
    expect(await caller.recheckAccess()).toEqual({ ...caller.identity, orgRole: "member" });
  });
});
