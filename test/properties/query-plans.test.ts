/**
 * The plans SQLite chooses for the queries whose cost must not grow with depth or with the
 * size of other tenants' data (API_CONTRACT §4: keyset pagination; a project delete cascades).
 */
import { env } from "cloudflare:test";
import { eq, fillPlaceholders, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Identity } from "../../src/context";
import { createDb } from "../../src/db/client";
import { numberedPageRequest, pageRequest, tablePageQuery } from "../../src/db/pagination";
import { auditLog, events, webhookDeliveries } from "../../src/db/schema";
import { executedQuery, expiredKeysQuery } from "../../src/idempotency/executed";
import { apiKeyPageQuery } from "../../src/services/api-keys/list";
import { auditPageQuery, orgAuditScope } from "../../src/services/audit/log";
import { statusPageQuery } from "../../src/services/deployments/all-projects";
import { pinsNow, pinsOfDeployment } from "../../src/services/deployments/config";
import { visibleDeploymentsQuery } from "../../src/services/deployments/deployments";
import { followQuery } from "../../src/services/deployments/timeline";
import { fanoutReadQuery } from "../../src/services/events/fanout";
import { deliveryPageQueries } from "../../src/services/integrations/deliveries";
import { recoverCandidatesQuery } from "../../src/services/integrations/redelivery";
import { stuckDeliveriesQuery, stuckIntegrationsQuery } from "../../src/services/integrations/sweep";
import { stuckDisconnectsQuery } from "../../src/services/projects/disconnect";
import { stateAtSelect, variableSetsAtSelect } from "../../src/services/variables/history";
import { versionsPageSelect } from "../../src/services/variables/versions";

async function plan(sqlText: string, params: unknown[]): Promise<string> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sqlText}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((r) => r.detail).join("\n");
}

const admin: Identity = {
  orgId: "org",
  accountId: "acc",
  orgRole: "admin",
  keyId: "key",
  scopes: ["*"],
  projectIds: null,
  database: "DB",
  limiter: "key:key",
};
const member: Identity = { ...admin, orgRole: "member" };

describe("GET /v1/deployments", () => {
  it.each([
    ["org admin, first page", admin, undefined],
    ["org member, deep page, status filter", member, ["failed", "queued"] as const],
  ])("%s: walks the org index in order, with no sort step", async (_name, identity, statuses) => {
    const db = createDb(env.DB);
    const filter = { statuses: statuses ? [...statuses] : undefined };
    const first = pageRequest({ limit: 20, sort_by: "-created_at" });
    const page = statuses
      ? { ...first, position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" } }
      : first;
    const { sql: text, params } = visibleDeploymentsQuery(db, identity, filter, page).toSQL();
    const detail = await plan(text, params);
    expect(detail).toMatch(/deployments USING INDEX deployments_org_created_idx/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });
});

describe("GET /v1/deployments with a project-restricted key", () => {
  it("still walks the org index in order, with no sort step", async () => {
    const db = createDb(env.DB);
    const restricted: Identity = { ...member, projectIds: ["p1", "p2"] };
    const page = pageRequest({ limit: 20, sort_by: "-created_at" });
    const { sql: text, params } = visibleDeploymentsQuery(db, restricted, {}, page).toSQL();
    const detail = await plan(text, params);
    expect(detail).toMatch(/deployments USING INDEX deployments_org_created_idx/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });
});

describe("the audit-log lists", () => {
  it.each([
    ["org, first page", admin, {}, "audit_log_org_created_idx"],
    [
      "org, restricted key, action filter",
      { ...admin, projectIds: ["p1"] },
      { actions: ["createProject"] },
      "audit_log_",
    ],
    ["org, actor filter, deep page", admin, { actorAccountId: "acc" }, "audit_log_org_created_idx"],
  ] as const)("%s: an index in order, no sort step", async (_name, identity, filter, index) => {
    const db = createDb(env.DB);
    const first = pageRequest({ limit: 20, sort_by: "-created_at" });
    const page = { ...first, position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" } };
    const scope = orgAuditScope(identity, "org");
    const { sql: text, params } = auditPageQuery(db, scope, { ...filter }, { byTime: page }).toSQL();
    const detail = await plan(text, params);
    expect(detail).toContain(index);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it("project list: the project index in order", async () => {
    const db = createDb(env.DB);
    const page = pageRequest({ limit: 20, sort_by: "created_at" });
    const { sql: text, params } = auditPageQuery(
      db,
      eq(auditLog.projectId, "p"),
      {},
      { byTime: page },
    ).toSQL();
    const detail = await plan(text, params);
    expect(detail).toMatch(/audit_log_project_created_idx/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it.each([
    ["org", (identity: typeof admin) => orgAuditScope(identity, "org"), "audit_log_org_sequence_idx"],
    ["project", () => eq(auditLog.projectId, "p"), "audit_log_project_sequence_idx"],
  ] as const)(
    "%s list after a sequence (§30): the sequence index in order, no sort step",
    async (_name, scope, index) => {
      const db = createDb(env.DB);
      const bySequence = { direction: "asc" as const, limit: 100, filter: "sequence:", after: 5000 };
      const { sql: text, params } = auditPageQuery(db, scope(admin), {}, { bySequence }).toSQL();
      const detail = await plan(text, params);
      expect(detail).toContain(index);
      expect(detail).not.toMatch(/TEMP B-TREE/);
    },
  );
});

describe("deleting a project", () => {
  it.each([
    "components",
    "stacks",
    "stack_resources",
    "variables",
    "webhook_deliveries",
    "deployments",
    "events",
    "variable_versions",
    "variable_version_values",
  ])("finds its %s through an index, not a scan", async (table) => {
    const detail = await plan(`DELETE FROM ${table} WHERE project_id = ?`, ["p"]);
    expect(detail).toMatch(/USING (COVERING )?INDEX/);
    expect(detail).not.toMatch(/^SCAN/m);
  });
});

describe("the event log (API_CONTRACT §13)", () => {
  it("a page of a project's events, filtered by type, walks the project index in order", async () => {
    const detail = await plan(
      "SELECT * FROM events WHERE project_id = ? AND type IN (?, ?) AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 21",
      ["p", "service.ok", "service.in_alarm", "2026-01-01T00:00:00.000Z", "x"],
    );
    expect(detail).toMatch(/events USING INDEX events_project_created_idx/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it("retention finds the oldest events through the created_at index, without sorting", async () => {
    const detail = await plan("SELECT id FROM events WHERE created_at < ? ORDER BY created_at, id LIMIT ?", [
      "2026-01-01T00:00:00.000Z",
      1000,
    ]);
    expect(detail).toMatch(/events USING (COVERING )?INDEX events_created_idx/);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it("retention finds the deliveries of a batch of events through the (event, integration) index", async () => {
    const detail = await plan(
      "SELECT id FROM webhook_deliveries WHERE event_id IN (SELECT value FROM json_each(?)) LIMIT ?",
      ['["a","b"]', 1000],
    );
    expect(detail).toMatch(
      /webhook_deliveries USING (COVERING )?INDEX webhook_deliveries_event_integration_idx/,
    );
  });
});

describe("a page of an integration's deliveries, with its attempts in the same batch", () => {
  it("the page walks the integration's index; its attempts are found by delivery, in order, with no sort step", async () => {
    const db = createDb(env.DB);
    const deep = {
      ...pageRequest({ limit: 40, sort_by: "-created_at" }),
      position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" },
    };
    const queries = deliveryPageQueries(db, eq(webhookDeliveries.integrationId, "i"), deep);
    const rows = queries.rows.toSQL();
    const attempts = queries.attempts.toSQL();
    const pagePlan = await plan(rows.sql, rows.params);
    expect(pagePlan).toMatch(
      /SEARCH webhook_deliveries USING INDEX webhook_deliveries_integration_created_idx/,
    );
    expect(pagePlan).not.toMatch(/TEMP B-TREE/);
    const attemptsPlan = await plan(attempts.sql, attempts.params);
    expect(attemptsPlan).toMatch(
      /SEARCH delivery_attempts USING INDEX delivery_attempts_delivery_attempt_idx \(delivery_id=\?\)/,
    );
    expect(attemptsPlan).toMatch(
      /SEARCH webhook_deliveries USING INDEX webhook_deliveries_integration_created_idx/,
    );
    expect(attemptsPlan).not.toMatch(/SCAN|TEMP B-TREE/);
  });
});

describe("a project's events, a page of a single-table list (tablePage)", () => {
  it("walks the project's index in order, a type filter (one JSON parameter) included, with no sort step", async () => {
    const deep = {
      ...pageRequest({ limit: 20, sort_by: "-created_at" }),
      position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" },
    };
    for (const filters of [
      [[events.projectId, "p"]] as const,
      [
        [events.projectId, "p"],
        [events.type, ["service.ok", "service.in_alarm"]],
      ] as const,
    ]) {
      const { query, values } = tablePageQuery(events, filters, deep);
      const detail = await plan(query.sql, fillPlaceholders(query.params, values));
      expect(detail).toMatch(/SEARCH events USING INDEX events_project_created_idx \(project_id=\? AND/);
      expect(detail).not.toMatch(/TEMP B-TREE|SCAN events/);
    }
  });
});

describe("POST …/recover", () => {
  it("walks the integration's delivery index from `since`, with no sort step, at any step", async () => {
    const db = createDb(env.DB);
    for (const after of [null, { createdAt: "2026-11-20T00:00:00.000Z", id: "a".repeat(32) }]) {
      const built = recoverCandidatesQuery(
        db,
        "i".repeat(22),
        {
          since: "2026-11-01T00:00:00.000Z",
          until: "2026-11-30T00:00:00.000Z",
          stuckBefore: "2026-11-30T00:00:00.000Z",
        },
        after,
      ).toSQL();
      const detail = await plan(built.sql, built.params);
      expect(detail, detail).toMatch(
        /webhook_deliveries USING INDEX webhook_deliveries_integration_created_idx/,
      );
      expect(detail, detail).not.toMatch(/TEMP B-TREE/);
    }
  });
});

describe("the key lists (API_CONTRACT §21)", () => {
  it.each([
    ["an org admin's first page", admin, {}, "api_keys_org_created_idx"],
    ["an org admin's, one account's, deep", admin, { accountId: "acc2" }, "api_keys_org_account_created_idx"],
    ["a member's (its own account's), deep", member, {}, "api_keys_org_account_created_idx"],
    [
      "an owner's key restricted to projects (its own family, §28), deep",
      { ...admin, projectIds: ["p1"] },
      {},
      "api_keys_org_account_created_idx",
    ],
  ] as const)("%s: an index in order, no sort step", async (name, identity, filter, index) => {
    const db = createDb(env.DB);
    const first = pageRequest({ limit: 20, sort_by: "-created_at" });
    const page = name.includes("deep")
      ? { ...first, position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" } }
      : first;
    const { sql: text, params } = apiKeyPageQuery(db, identity, filter, page).toSQL();
    const detail = await plan(text, params);
    expect(detail).toContain(`USING INDEX ${index}`);
    expect(detail).not.toMatch(/TEMP B-TREE/);
  });

  it("a revocation finds a key's children through the parent index", async () => {
    const detail = await plan("SELECT id FROM api_keys WHERE parent_id = ?", ["k"]);
    expect(detail).toMatch(/USING (COVERING )?INDEX api_keys_parent_idx/);
  });
});

describe("the cron's sweep of lost disconnects (API_CONTRACT §8)", () => {
  it("reads the partial index of disconnecting projects alone, whatever the projects table holds", async () => {
    const { sql: text, params } = stuckDisconnectsQuery(createDb(env.DB), "2026-01-01T00:00:00.000Z").toSQL();
    expect(await plan(text, params)).toMatch(/projects USING INDEX projects_disconnecting_idx/);
  });
});

describe("GET /internal/v1/deployments (API_CONTRACT §20)", () => {
  it("each status's page walks the (status, created_at, id) index from the cursor, with no sort step", async () => {
    const db = createDb(env.DB);
    const first = pageRequest({ limit: 20, sort_by: "created_at" });
    for (const page of [first, { ...first, position: { createdAt: "2026-01-01T00:00:00.000Z", id: "x" } }]) {
      const { sql: text, params } = statusPageQuery(db, "queued", page, { engineQueue: true }).toSQL();
      const detail = await plan(text, params);
      expect(detail).toMatch(/deployments USING INDEX deployments_status_created_idx/);
      expect(detail).not.toMatch(/TEMP B-TREE/);
    }
  });
});

describe("a scope's history (API_CONTRACT §18)", () => {
  const db = createDb(env.DB);
  const scopes = [
    { kind: "environment", id: "e1" },
    { kind: "component", id: "c1" },
  ] as const;

  it.each(scopes)(
    "the scope after a version (a restore), in a $kind: one walk of the key, no sort step",
    async (parent) => {
      const { sql: text, params } = stateAtSelect(db, parent, 7).toSQL();
      const detail = await plan(text, params);
      expect(detail).toMatch(
        /variable_version_values USING (PRIMARY KEY|INDEX sqlite_autoindex_variable_version_values_1)/,
      );
      expect(detail).not.toMatch(/TEMP B-TREE|SCAN variable_version_values/);
    },
  );

  it.each([
    ["a deployment's pinned scopes", pinsOfDeployment("d1")],
    ["the scopes as they are now", pinsNow(sql`(SELECT environment_id FROM deployments WHERE id = ${"d1"})`)],
  ] as const)(
    "%s (a config, its diff): the names one seek each, then one seek of each name's row, whatever the history",
    async (_name, pins) => {
      const environment = sql`(SELECT environment_id FROM deployments WHERE id = ${"d1"})`;
      const { sql: text, params } = variableSetsAtSelect(db, environment, pins).toSQL();
      const detail = await plan(text, params);
      expect(detail).toMatch(
        /variable_version_values USING INDEX sqlite_autoindex_variable_version_values_1 \(environment_id=\? AND scope=\? AND name=\? AND version=\?\)/,
      );
      expect(detail).not.toMatch(/TEMP B-TREE|SCAN variable_version_values|AUTOMATIC/);
    },
  );

  it.each(scopes)(
    "a deep page of the $kind's versions walks the key in order, with no sort step",
    async (parent) => {
      for (const sort_by of ["-created_at", "created_at"] as const) {
        const page = { ...numberedPageRequest({ limit: 20, sort_by }), after: 40 };
        const { sql: text, params } = versionsPageSelect(db, parent, page).toSQL();
        const detail = await plan(text, params);
        expect(detail).toMatch(
          /variable_versions USING (PRIMARY KEY|INDEX sqlite_autoindex_variable_versions_1)/,
        );
        expect(detail).not.toMatch(/TEMP B-TREE|SCAN variable_versions/);
      }
    },
  );
});

describe("the cron's sweep of deliveries left pending", () => {
  it("reads only the partial index of pending deliveries: the integrations, then each one's, oldest due first", async () => {
    const db = createDb(env.DB);
    const before = "2026-11-30T00:00:00.000Z";
    // From a random id on, then the ones below it: each a search of the index, in its order.
    for (const range of [{ from: "i".repeat(22) }, { below: "i".repeat(22), limit: 40 }]) {
      const integrations = stuckIntegrationsQuery(db, before, range).toSQL();
      const found = await plan(integrations.sql, integrations.params);
      expect(found, found).toMatch(
        /SEARCH webhook_deliveries USING COVERING INDEX webhook_deliveries_pending_due_idx \(integration_id[<>]\?\)/,
      );
      expect(found, found).not.toMatch(/TEMP B-TREE/);
    }
    const deliveries = stuckDeliveriesQuery(db, "i".repeat(22), before).toSQL();
    const detail = await plan(deliveries.sql, deliveries.params);
    expect(detail, detail).toMatch(
      /SEARCH webhook_deliveries USING INDEX webhook_deliveries_pending_due_idx \(integration_id=\? AND next_attempt_at<\?\)/,
    );
    expect(detail, detail).not.toMatch(/TEMP B-TREE/);
  });
});

describe("Idempotency-Keys in the audit log", () => {
  it("a key is one row of the unique index; the cron walks the partial index of keyed entries, oldest first", async () => {
    const db = createDb(env.DB);
    const lookup = executedQuery(db, "k".repeat(22), "key").toSQL();
    expect(await plan(lookup.sql, lookup.params)).toMatch(
      /SEARCH audit_log USING INDEX audit_log_idempotency_key_idx \(actor_api_key_id=\? AND idempotency_key=\?\)/,
    );
    const expired = expiredKeysQuery(db, "2026-11-30T00:00:00.000Z", 1000).toSQL();
    const detail = await plan(expired.sql, expired.params);
    expect(detail, detail).toMatch(
      /SEARCH audit_log USING (COVERING )?INDEX audit_log_idempotency_created_idx/,
    );
    expect(detail, detail).not.toMatch(/TEMP B-TREE/);
  });
});

describe("an event's fan-out", () => {
  it("reads the event by its key and its project's integrations through the project index, in one query", async () => {
    const { sql: text, params } = fanoutReadQuery(createDb(env.DB), "e".repeat(22)).toSQL();
    const detail = await plan(text, params);
    expect(detail, detail).toMatch(
      /SEARCH events USING INDEX sqlite_autoindex_events_1 \(id=\?\)|SEARCH events USING PRIMARY KEY/,
    );
    expect(detail, detail).toMatch(
      /SEARCH notification_integrations USING INDEX notification_integrations_project_created_idx \(project_id=\?\)/,
    );
    expect(detail, detail).not.toMatch(/SCAN/);
  });
});

describe("a live stream's page (API_CONTRACT §19, §33)", () => {
  it("reads a range of the timeline's primary key, at most `limit` rows, then weighs only those", async () => {
    const { sql: text, params } = followQuery();
    const values = { id: "d".repeat(22), after: 10, limit: 501, weight: 512 * 1024 };
    const detail = await plan(text, fillPlaceholders(params, values));
    expect(detail, detail).toMatch(
      /SEARCH deployment_timeline USING (INDEX sqlite_autoindex_deployment_timeline_1|PRIMARY KEY) \(deployment_id=\? AND seq>\?\)/,
    );
    expect(detail, detail).not.toMatch(/SCAN deployment_timeline/);
  });
});
