/** internalReplaceOrgLimits: PUT /internal/v1/orgs/{org_id}/limits (API_CONTRACT §29). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OrgLimitsRecord } from "../../../../src/schemas/limits";
import { interceptStatements, internal, once, request } from "../../../helpers/api";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { type Caller, createApiKey, createOrgWithOwner, createProject } from "../../../helpers/factories";
import { readLimits } from "../../../helpers/limits";
import { runInternalRouteTests } from "../../../helpers/security";

const limitsOf = (record: OrgLimitsRecord) => Object.fromEntries(record.limits.map((l) => [l.name, l.limit]));

describe("PUT /internal/v1/orgs/{org_id}/limits", () => {
  it("sets the names given, keeps the others, and answers the record as the key reads it", async () => {
    const { org, owner } = await createOrgWithOwner();
    const res = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {
      projects: 7,
      api_keys: 1_000_000,
      audit_streams: 0,
    });
    expect(res.status, res.raw).toBe(200);
    expect(limitsOf(res.body)).toEqual({
      projects: 7,
      environments: 1000,
      variables: 20000,
      api_keys: 1_000_000,
      integrations: 200,
      audit_streams: 0,
      deployments_per_day: 2000,
    });
    expect(await readLimits(owner)).toEqual(res.body);
    // An empty body changes nothing and answers the record.
    const again = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {});
    expect(again.status).toBe(200);
    expect(limitsOf(again.body)).toEqual(limitsOf(res.body));
  });

  it("writes one entry, internal.replaceOrgLimits, holding only the limits that changed", async () => {
    const { org } = await createOrgWithOwner();
    const res = await internal("PUT", `/orgs/${org.id}/limits`, { projects: 5, variables: 20000 });
    const rows = await env.DB.prepare(
      "SELECT action, target_type, target_id, changes FROM audit_log WHERE request_id = ?",
    )
      .bind(res.headers.get("x-request-id"))
      .all<{ action: string; target_type: string; target_id: string; changes: string }>();
    expect(rows.results).toHaveLength(1);
    expect(rows.results[0]).toMatchObject({
      action: "internal.replaceOrgLimits",
      target_type: "organization",
      target_id: org.id,
    });
    expect(JSON.parse(rows.results[0]?.changes ?? "null")).toEqual({ projects: { from: 100, to: 5 } });
    // Nothing changed: no entry.
    const none = await internal("PUT", `/orgs/${org.id}/limits`, { projects: 5 });
    const count = await env.DB.prepare("SELECT count(*) AS n FROM audit_log WHERE request_id = ?")
      .bind(none.headers.get("x-request-id"))
      .first<{ n: number }>();
    expect(count?.n).toBe(0);
  });

  it("a lower limit removes nothing", async () => {
    const { org, owner } = await createOrgWithOwner();
    await createProject(owner);
    await createProject(owner);
    const res = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, { projects: 1 });
    expect(res.body.limits[0]).toEqual({ name: "projects", limit: 1, used: 2 });
  });

  it("refuses what is not an integer 0–1,000,000 per name, and unknown names, changing nothing", async () => {
    const { org } = await createOrgWithOwner();
    // Names left out keep their limit: an empty body answers the record as it stands.
    const before = (await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {})).body;
    expect(before.limits.length).toBeGreaterThan(4);
    for (const [body, path] of [
      [{ projects: -1 }, "projects"],
      [{ projects: 1_000_001 }, "projects"],
      [{ variables: 1.5 }, "variables"],
      [{ api_keys: "10" }, "api_keys"],
      [{ integrations: null }, "integrations"],
      [{ builds: 3 }, "builds"],
    ] as const) {
      expectError(await internal("PUT", `/orgs/${org.id}/limits`, body), 400, "bad_input", path);
    }
    // Every limit as it was, the refused names' too.
    const { body } = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {});
    expect(body.limits).toEqual(before.limits);
    expect(body.limits.find((l) => l.name === "projects")?.limit).toBe(100);
  });

  it("operators changing the limits at once each answer 200, in commit order, one entry each", async () => {
    const { org } = await createOrgWithOwner();
    const values = Array.from({ length: 12 }, (_, i) => 10 + i);
    const answers = await Promise.all(
      values.map((projects) => internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, { projects })),
    );
    for (const res of answers) expect(res.status, res.raw).toBe(200);
    const { results } = await env.DB.prepare(
      "SELECT changes FROM audit_log WHERE org_id = ? AND action = 'internal.replaceOrgLimits' ORDER BY sequence",
    )
      .bind(org.id)
      .all<{ changes: string }>();
    // Each entry's `from` is the one before it's `to`: the limits each write replaced.
    const chain = results.map((r) => JSON.parse(r.changes).projects as { from: number; to: number });
    expect(chain).toHaveLength(values.length);
    expect(chain[0]?.from).toBe(100);
    for (let i = 1; i < chain.length; i++) expect(chain[i]?.from).toBe(chain[i - 1]?.to);
    expect(new Set(chain.map((c) => c.to))).toEqual(new Set(values));
    const { body } = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {});
    expect(body.limits[0]?.limit).toBe(chain[chain.length - 1]?.to);
  });

  it("a change that meets other operators' changes between its read and its write still applies, over theirs", async () => {
    const { org } = await createOrgWithOwner();
    // Before each of its writes, another operator's change lands (as many as it would retry).
    let others = 0;
    const DB = interceptStatements({
      'update "org_limits"': async () => {
        if (others >= 10) return;
        others++;
        expect((await internal("PUT", `/orgs/${org.id}/limits`, { projects: 50 + others })).status).toBe(200);
      },
    });
    const res = await request<OrgLimitsRecord>("PUT", `/internal/v1/orgs/${org.id}/limits`, {
      body: { projects: 7 },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      bindings: { DB },
    });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.limits[0]).toMatchObject({ name: "projects", limit: 7 });
    const last = await env.DB.prepare(
      "SELECT changes FROM audit_log WHERE org_id = ? AND action = 'internal.replaceOrgLimits' ORDER BY sequence DESC LIMIT 1",
    )
      .bind(org.id)
      .first<{ changes: string }>();
    expect(JSON.parse(last?.changes ?? "null")).toEqual({ projects: { from: 50 + others, to: 7 } });
  });

  describe("If-Match (API_CONTRACT §12)", () => {
    const put = (orgId: string, body: unknown, ifMatch: string, DB?: D1Database) =>
      request<OrgLimitsRecord>("PUT", `/internal/v1/orgs/${orgId}/limits`, {
        body,
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, "if-match": ifMatch },
        ...(DB ? { bindings: { DB } } : {}),
      });
    /** The ETag of the organization's limits as its key reads them now. */
    const etagOf = async (caller: Caller) =>
      (await request("GET", `/v1/orgs/${caller.orgId}/limits`, { key: caller.key })).headers.get("etag") ??
      "";
    /** The DB binding that runs `meanwhile` once, between the PUT's comparison and its write's batch. */
    const betweenComparisonAndWrite = (meanwhile: () => Promise<void>) =>
      interceptStatements({ 'select "org_id" from "org_limits"': once(meanwhile) });
    const entries = async (orgId: string) =>
      (
        await env.DB.prepare(
          "SELECT count(*) AS n FROM audit_log WHERE org_id = ? AND action = 'internal.replaceOrgLimits'",
        )
          .bind(orgId)
          .first<{ n: number }>()
      )?.n;

    it("the current ETag (the one GET /v1/orgs/{org_id}/limits serves) applies the change; a stale one is 409 and changes nothing", async () => {
      const { org, owner } = await createOrgWithOwner();
      const etag = await etagOf(owner);
      const res = await put(org.id, { projects: 9 }, etag);
      expect(res.status, res.raw).toBe(200);
      expect(res.headers.get("etag")).not.toBe(etag);
      expectError(await put(org.id, { projects: 8 }, etag), 409, "conflict", "header.if-match");
      expect((await readLimits(owner)).limits[0]?.limit).toBe(9);
      expect(await entries(org.id)).toBe(1);
      // `*`, and a list that names the current ETag, apply.
      expect((await put(org.id, { projects: 8 }, "*")).status).toBe(200);
      expect((await put(org.id, { projects: 6 }, `"stale", ${await etagOf(owner)}`)).status).toBe(200);
      expect((await readLimits(owner)).limits[0]?.limit).toBe(6);
      // Every name at once, under If-Match: one batch within D1's bounds (parameters, compound SELECTs).
      const all = {
        projects: 1,
        environments: 2,
        variables: 3,
        api_keys: 4,
        integrations: 5,
        audit_streams: 6,
        deployments_per_day: 7,
      };
      const every = await put(org.id, all, await etagOf(owner));
      expect(every.status, every.raw).toBe(200);
      expect(limitsOf(every.body)).toEqual(all);
    });

    it("of two operators holding the same ETag, exactly one wins, even when the second read it before the first wrote", async () => {
      const { org, owner } = await createOrgWithOwner();
      const etag = await etagOf(owner);
      const DB = betweenComparisonAndWrite(async () => {
        expect((await put(org.id, { projects: 11 }, etag)).status).toBe(200);
      });
      expectError(await put(org.id, { projects: 12 }, etag, DB), 409, "conflict", "header.if-match");
      expect((await readLimits(owner)).limits[0]?.limit).toBe(11);
      expect(await entries(org.id)).toBe(1);
    });

    it("a count that moves between the comparison and the write (a key created) makes the ETag stale: 409", async () => {
      const { org, owner } = await createOrgWithOwner();
      const etag = await etagOf(owner);
      const DB = betweenComparisonAndWrite(() => createApiKey(owner).then(() => undefined));
      expectError(await put(org.id, { projects: 12 }, etag, DB), 409, "conflict", "header.if-match");
      expect((await readLimits(owner)).limits[0]?.limit).toBe(100);
      expect(await entries(org.id)).toBe(0);
    });

    it("on an unknown organization is 404", async () => {
      expectError(await put(UNKNOWN_ID, { projects: 1 }, '"x"'), 404, "not_found");
    });
  });

  it("an unknown organization is 404", async () => {
    expectError(await internal("PUT", `/orgs/${UNKNOWN_ID}/limits`, { projects: 1 }), 404, "not_found");
  });

  runInternalRouteTests("PUT /internal/v1/orgs/{org_id}/limits", async () => {
    const { org } = await createOrgWithOwner();
    return { method: "PUT", path: `/internal/v1/orgs/${org.id}/limits`, body: { projects: 5 } };
  });
});
