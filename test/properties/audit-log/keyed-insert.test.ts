/**
 * The audit insert is keyed, not positional (src/services/audit/entry.ts, src/db/keyed-select.ts):
 * the INSERT's column list and its SELECT list pair up by name, each column receiving its own
 * value, so a column added mid-table can never shift values into its neighbours. Checked on the
 * statement itself and on the row D1 stores from it.
 */
import { getTableColumns, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { withIdentity } from "../../../src/context";
import { auditLog } from "../../../src/db/schema";
import { auditEntry } from "../../../src/services/audit/entry";
import { serviceContext } from "../../helpers/context";

/** An entry whose every column gets a value of its own (no two alike, none null), and those values. */
function distinctEntry({ when }: { when?: "always" | ReturnType<typeof sql> } = { when: "always" }) {
  const base = serviceContext({}, "keyedInsertTest");
  const ctx = withIdentity(base, {
    identity: {
      orgId: "org-keyed",
      accountId: "acc-keyed",
      orgRole: "owner",
      keyId: "key-keyed",
      scopes: ["*"],
      projectIds: null,
      database: base.database,
      limiter: "key:key-keyed",
    },
    recheckAccess: async () => null,
  });
  ctx.request = { operationId: "keyedInsertTest", ip: "192.0.2.7", userAgent: "keyed-agent/1" };
  ctx.idempotency = { key: "idem-keyed", fingerprint: "fp-keyed", entryIds: [] };
  const id = `aud-keyed-${crypto.randomUUID()}`;
  const statement = auditEntry(ctx, {
    id,
    target: { type: "target-type-keyed", id: "target-id-keyed" },
    projectId: "prj-keyed",
    changes: { name: { from: "a", to: "b" } },
    ...(when === undefined ? {} : { when }),
  });
  const expected: Record<string, unknown> = {
    id,
    org_id: "org-keyed",
    project_id: "prj-keyed",
    action: "keyedInsertTest",
    target_type: "target-type-keyed",
    target_id: "target-id-keyed",
    actor_type: "api_key",
    actor_account_id: "acc-keyed",
    actor_api_key_id: "key-keyed",
    request_id: ctx.requestId,
    ip: "192.0.2.7",
    user_agent: "keyed-agent/1",
    changes: JSON.stringify({ name: { from: "a", to: "b" } }),
    idempotency_key: "idem-keyed",
    idempotency_fingerprint: "fp-keyed",
    // Kept in the row, not in parts (src/db/spill.ts; test/properties/large-records.test.ts).
    changes_spilled: null,
  };
  return { ctx, statement, expected };
}

describe("the audit insert", () => {
  it("names each column's value in its SELECT list, in the INSERT's column order", () => {
    const { statement, expected } = distinctEntry();
    const { sql: text, params } = statement.toSQL();
    const match =
      /^insert into "audit_log" \(([^)]*)\) SELECT (.*) FROM \(SELECT \? AS o\) AS org returning .*$/s.exec(
        text,
      );
    expect(match, text).not.toBeNull();
    const columns = (match?.[1] ?? "").split(", ").map((c) => c.replaceAll('"', ""));
    // Every column of the table, in its order: the list drizzle writes.
    expect(columns).toEqual(Object.values(getTableColumns(auditLog)).map((c) => c.name));
    // Each SELECT item is a bound value aliased as the column at its position in the INSERT's list,
    // but the organization, named once in the FROM (`org.o`), and the sequence, which the statement
    // computes from the organization's latest (§30).
    const select = match?.[2] ?? "";
    const sequence = /, (CASE WHEN org\.o IS NULL THEN NULL ELSE \(SELECT .*?\) END) as "sequence", /.exec(
      select,
    );
    expect(sequence, select).not.toBeNull();
    const items = select
      .replace(sequence?.[1] ?? "", "?")
      .replace('org.o as "org_id"', '? as "org_id"')
      .split(", ");
    expect(items).toEqual(columns.map((c) => `? as "${c}"`));
    // And each column receives its own value: the organization's is the last parameter.
    const valueParams = [...params];
    const org = valueParams.pop();
    expect(org).toBe("org-keyed");
    const computed = new Set(["org_id", "sequence"]);
    const received = Object.fromEntries(
      columns.filter((c) => !computed.has(c)).map((c, i) => [c, valueParams[i]]),
    );
    expect({ ...received, org_id: org }).toEqual({ ...expected, created_at: expect.any(String) });
  });

  it("is, for an entry of values, the statement Drizzle's builder writes for it (built once, not per entry)", () => {
    // A condition given as SQL takes the builder; the default condition is the same text.
    const built = distinctEntry({ when: sql`changes() > 0` }).statement.toSQL();
    const compiled = distinctEntry({}).statement.toSQL();
    expect(compiled.sql).toBe(built.sql);
    expect(compiled.sql).toContain(" WHERE changes() > 0 returning ");
    // The same values, each in its place (ids, request ids and times are each entry's own).
    const masked = (params: unknown[]) =>
      params.map((p) => (typeof p === "string" && /^aud-keyed-|^test-|^\d{4}-/.test(p) ? "*" : p));
    expect(masked(compiled.params)).toEqual(masked(built.params));
  });

  it("stores each value in the column it is named for", async () => {
    const { ctx, statement, expected } = distinctEntry();
    await ctx.db.batch([statement]);
    // As stored, column by column (a raw read: no JSON decoding of `changes`).
    const row = await ctx.db.get<Record<string, unknown>>(
      sql`SELECT * FROM audit_log WHERE id = ${expected.id}`,
    );
    // Its organization's first entry: sequence 1 (API_CONTRACT §30).
    expect(row).toEqual({ ...expected, sequence: 1, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });
});
