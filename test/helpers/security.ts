/**
 * The common security checks every /v1 route gets (after Unkey's runCommonRouteTests):
 * no key, malformed key, unknown key, revoked key → 401 unauthenticated; a key of another
 * organization → 404 not_found (or what the route declares), never the resource.
 */
import { expect, it } from "vitest";
import { request } from "./api";
import { type Caller, createOrgWithOwner, revokeKey } from "./factories";

export type RouteUnderTest = {
  method: string;
  path: string;
  body?: unknown;
  /** The caller who may use the route (its key is used for the revoked-key check on a fresh key). */
  caller: Caller;
};

export function runCommonRouteTests(
  name: string,
  setup: () => Promise<RouteUnderTest>,
  opts: { otherOrgStatus?: number } = {},
) {
  const expect401 = async (key: string | null, headers: Record<string, string> = {}) => {
    const route = await setup();
    const res = await request<{ code: string }>(route.method, route.path, { key, body: route.body, headers });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthenticated");
    expect(res.headers.get("x-request-id")).toBeTruthy();
  };

  it(`${name}: no key → 401`, () => expect401(null));
  it(`${name}: malformed key → 401`, () => expect401("not-a-key"));
  it(`${name}: unknown key → 401`, () => expect401(`dpk_${"A".repeat(43)}`));

  it(`${name}: revoked key → 401`, async () => {
    const route = await setup();
    await revokeKey(route.caller.keyId);
    const res = await request<{ code: string }>(route.method, route.path, {
      key: route.caller.key,
      body: route.body,
    });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("unauthenticated");
  });

  it(`${name}: another organization's owner → ${opts.otherOrgStatus ?? 404}`, async () => {
    const route = await setup();
    const { owner: stranger } = await createOrgWithOwner();
    const res = await request<{ code: string }>(route.method, route.path, {
      key: stranger.key,
      body: route.body,
    });
    expect(res.status).toBe(opts.otherOrgStatus ?? 404);
    if ((opts.otherOrgStatus ?? 404) === 404) expect(res.body.code).toBe("not_found");
    // An answer of the stranger's own (a list of its own organization's): nothing of the route's.
    for (const id of [route.caller.orgId, route.caller.accountId, route.caller.keyId]) {
      expect(res.raw, `another organization's answer names ${id}`).not.toContain(id);
    }
  });
}

export type InternalRouteUnderTest = { method: string; path: string; body?: unknown };

/**
 * Who may call an /internal/v1 route: the operator's ADMIN_TOKEN as a bearer, nobody else. No
 * authorization, a wrong token, or an API key (an organization owner's) → 401 unauthenticated.
 * `setup` returns a request the route would carry out with the token; it runs once for the three.
 */
export function runInternalRouteTests(name: string, setup: () => Promise<InternalRouteUnderTest>) {
  // One world serves the three callers: each is refused before the route runs, so none changes it.
  let world: Promise<InternalRouteUnderTest> | undefined;
  const expect401 = async (headers: Record<string, string>) => {
    world ??= setup();
    const route = await world;
    const res = await request<{ code: string }>(route.method, route.path, { body: route.body, headers });
    expect(res.status, res.raw).toBe(401);
    expect(res.body.code).toBe("unauthenticated");
  };

  it(`${name}: no authorization → 401`, () => expect401({}));
  it(`${name}: a wrong token → 401`, () => expect401({ authorization: "Bearer not-the-admin-token" }));
  it(`${name}: an organization owner's API key → 401`, async () => {
    const { owner } = await createOrgWithOwner();
    await expect401({ "x-api-key": owner.key });
  });
}
