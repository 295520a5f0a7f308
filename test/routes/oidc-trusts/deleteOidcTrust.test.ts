/**
 * deleteOidcTrust: DELETE /v1/oidc-trusts/{id} (API_CONTRACT §27, §28, §12). That it revokes the
 * keys the trust issued: test/routes/oidc/exchangeOidcToken.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { expectError } from "../../helpers/expect";
import { createCaller, createOrgWithOwner, createProject, deriveKey } from "../../helpers/factories";
import { createTrust } from "../../helpers/oidc";
import { runCommonRouteTests } from "../../helpers/security";

const indexRow = (id: string) =>
  env.DB.prepare("SELECT trust_id FROM oidc_trust_index WHERE trust_id = ?").bind(id).first();

describe("DELETE /v1/oidc-trusts/{id}", () => {
  it("deletes the trust, its directory index row, with one audit entry; a second delete is 404", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const trust = await createTrust(owner);
    const requestId = `delete-trust-${crypto.randomUUID()}`;
    const res = await request("DELETE", `/v1/oidc-trusts/${trust.id}`, {
      key: admin.key,
      headers: { "x-request-id": requestId },
    });
    expect(res.status).toBe(204);
    expectError(await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: owner.key }), 404, "not_found");
    expect(await indexRow(trust.id)).toBeNull();
    const entries = await rowsOf(requestId);
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(entry).toMatchObject({
      action: "deleteOidcTrust",
      target_type: "oidc_trust",
      target_id: trust.id,
    });
    expect(JSON.parse(String(entry?.changes))).toMatchObject({ issuer: { from: trust.issuer, to: null } });
    expectError(await request("DELETE", `/v1/oidc-trusts/${trust.id}`, { key: owner.key }), 404, "not_found");
  });

  it("honours If-Match: another ETag is 409 and changes nothing; the current one deletes", async () => {
    const { owner } = await createOrgWithOwner();
    const trust = await createTrust(owner);
    const read = await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: owner.key });
    const stale = await request("DELETE", `/v1/oidc-trusts/${trust.id}`, {
      key: owner.key,
      headers: { "if-match": '"0123456789abcdef0123456789abcdef"' },
    });
    expectError(stale, 409, "conflict", "header.if-match");
    const current = await request("DELETE", `/v1/oidc-trusts/${trust.id}`, {
      key: owner.key,
      headers: { "if-match": read.headers.get("etag") ?? "" },
    });
    expect(current.status).toBe(204);
  });

  it("is 403 unauthorized for a member's key and a key restricted to projects (§28), deleting nothing", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const trust = await createTrust(owner);
    const member = await createCaller(org, "member", owner);
    const restricted = await deriveKey(owner, { project_ids: [project.id] });
    for (const caller of [member, restricted]) {
      expectError(
        await request("DELETE", `/v1/oidc-trusts/${trust.id}`, { key: caller.key }),
        403,
        "unauthorized",
      );
    }
    expect((await request("GET", `/v1/oidc-trusts/${trust.id}`, { key: owner.key })).status).toBe(200);
  });

  runCommonRouteTests("DELETE /v1/oidc-trusts/{id}", async () => {
    const { owner } = await createOrgWithOwner();
    const trust = await createTrust(owner);
    return { method: "DELETE", path: `/v1/oidc-trusts/${trust.id}`, caller: owner };
  });
});
