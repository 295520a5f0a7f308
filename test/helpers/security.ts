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
  });
}
