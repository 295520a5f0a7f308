/** getApiKey: GET /v1/api-keys/{id}, one key's record under the list's visibility (API_CONTRACT §21). */
import { describe, expect, it } from "vitest";
import type { ApiKeyInfo } from "../../../src/schemas/organization";
import { request } from "../../helpers/api";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import { createApiKey, createCaller, createOrgWithOwner, deriveKey } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

const get = (key: string, id: string) => request<ApiKeyInfo>("GET", `/v1/api-keys/${id}`, { key });

describe("GET /v1/api-keys/{id}", () => {
  it("reads a key's record with a strong ETag, never the key", async () => {
    const { org, owner } = await createOrgWithOwner();
    const made = await deriveKey(owner, { name: "ci", scopes: ["deployments:read"] });
    const res = await get(owner.key, made.keyId);
    expect(res.status).toBe(200);
    const { key, ...record } = made.record;
    expect(res.body).toEqual(record);
    expect(res.body).toMatchObject({ org_id: org.id, parent_id: owner.keyId, revoked_at: null });
    expect(res.raw).not.toContain(key.slice(4));
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
  });

  it("`current` is the calling key, not an ID", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await request<Record<string, unknown>>("GET", "/v1/api-keys/current", { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(owner.keyId);
    expect(res.body).not.toHaveProperty("revoked_at");
  });

  it("an owner or admin reads any key of the organization; others only their account's (404 otherwise)", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const memberSecond = await createApiKey(member, {}, owner);
    for (const caller of [owner, admin]) expect((await get(caller.key, member.keyId)).status).toBe(200);
    expect((await get(member.key, memberSecond.keyId)).status).toBe(200);
    expectError(await get(member.key, owner.keyId), 404, "not_found");
    expectError(await get(member.key, UNKNOWN_ID), 404, "not_found");
    expectError(await get(member.key, "not-an-id"), 400, "bad_input");
  });

  runCommonRouteTests("GET /v1/api-keys/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    return { method: "GET", path: `/v1/api-keys/${owner.keyId}`, caller: owner };
  });
});
