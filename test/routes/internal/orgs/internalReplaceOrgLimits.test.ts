/** internalReplaceOrgLimits: PUT /internal/v1/orgs/{org_id}/limits (API_CONTRACT §29). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OrgLimitsRecord } from "../../../../src/schemas/limits";
import { internal } from "../../../helpers/api";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { createOrgWithOwner, createProject } from "../../../helpers/factories";
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
    const { body } = await internal<OrgLimitsRecord>("PUT", `/orgs/${org.id}/limits`, {});
    expect(body.limits[0]?.limit).toBe(100);
  });

  it("an unknown organization is 404", async () => {
    expectError(await internal("PUT", `/orgs/${UNKNOWN_ID}/limits`, { projects: 1 }), 404, "not_found");
  });

  runInternalRouteTests("PUT /internal/v1/orgs/{org_id}/limits", async () => {
    const { org } = await createOrgWithOwner();
    return { method: "PUT", path: `/internal/v1/orgs/${org.id}/limits`, body: { projects: 5 } };
  });
});
