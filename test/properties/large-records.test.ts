/**
 * Records that list a whole scope (API_CONTRACT §18, §14, §30, §32) within the deployed D1's
 * limits. A replace that keeps one name of a scope of thousands, a restore of it, and its export
 * each list every name: in the audit entry's `changes` and (a change) in the version's `changes`,
 * several megabytes with long names. D1 refuses a value or a row over 2,000,000 bytes, so such
 * JSON is kept in parts (src/db/spill.ts). Run here through a binding with D1's limits
 * (test/helpers/d1-limits.ts): every write is accepted, every reader (the version, the audit log,
 * the audit stream, a move to another database, retention) sees each list whole, and no stored
 * value comes near the limit.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../src/context";
import { PART_CHARS } from "../../src/db/spill";
import type { AuditEntryRecord } from "../../src/schemas/audit";
import { purgeExpiredAuditEntries } from "../../src/services/audit/log";
import { request } from "../helpers/api";
import { batches, caughtUp, createStream, receiverBucket } from "../helpers/audit-streams";
import { D1_VALUE_BYTES, d1WithLimits } from "../helpers/d1-limits";
import { createEnvironment, createOrgWithOwner, createProject } from "../helpers/factories";
import { moveOrg } from "../helpers/moves";
import type { ChangeResult, VersionRecord } from "../helpers/variable-sets";
import { allowTheLocalReceiver } from "../helpers/webhooks";

/** Names of 255 characters (§3's longest), distinct, in sorted order. */
const longName = (i: number) => `N${String(i).padStart(5, "0")}_`.padEnd(255, "x");
/** Enough names that their list is over 2,000,000 bytes in every record that lists them. */
const NAMES = 8_000;
const PER_REQUEST = 500;

allowTheLocalReceiver();

describe("records listing every name of a large scope", () => {
  it("a replace, a restore and an export of 8,000 long names: written within D1's limits, read back whole everywhere", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const environment = await createEnvironment(project.id);
    const base = `/v1/environments/${environment.id}/variables`;
    const limited = d1WithLimits();
    const call = <T>(method: string, path: string, body?: unknown) =>
      request<T>(method, path, { key: owner.key, body, bindings: { DB: limited.DB } });
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);

    const names = Array.from({ length: NAMES }, (_, i) => longName(i));
    for (let start = 0; start < NAMES; start += PER_REQUEST) {
      const variables = Object.fromEntries(
        names.slice(start, start + PER_REQUEST).map((name) => [name, { type: "string", value: "v" }]),
      );
      const res = await call<ChangeResult>("PATCH", base, { variables });
      expect(res.status, res.raw.slice(0, 500)).toBe(200);
    }
    const full = NAMES / PER_REQUEST;

    // Keep one new name: every one of the 8,000 is deleted, and listed.
    const replaced = await call<ChangeResult>("PATCH", base, {
      mode: "replace",
      variables: { ONLY: { type: "string", value: "v" } },
    });
    expect(replaced.status, replaced.raw.slice(0, 500)).toBe(200);
    expect(replaced.body.version).toBe(full + 1);
    expect(replaced.body.changes).toHaveLength(NAMES + 1);
    // Back to the full scope: every name created again, ONLY deleted.
    const restored = await call<ChangeResult>("POST", `${base}/versions/${full}/restore`);
    expect(restored.status, restored.raw.slice(0, 500)).toBe(200);
    expect(restored.body.changes).toHaveLength(NAMES + 1);
    const exported = await call<string>("GET", `${base}/export`);
    expect(exported.status).toBe(200);
    expect(exported.raw.split("\n").filter(Boolean)).toHaveLength(NAMES);
    // Each list went to D1 in parts (counted below), no value bound over a part's size.
    expect(limited.largest()).toBe(PART_CHARS);

    const deleted = names.map((name) => ({
      name,
      action: "deleted",
      type: { from: "string", to: null },
      value_changed: true,
    }));
    const onlyCreated = {
      name: "ONLY",
      action: "created",
      type: { from: null, to: "string" },
      value_changed: true,
    };
    const expectVersions = async (read: typeof call) => {
      const version = await read<VersionRecord>("GET", `${base}/versions/${full + 1}`);
      expect(version.status).toBe(200);
      expect(version.body.changes).toEqual([...deleted, onlyCreated]);
      // A page stops at VERSIONS_PAGE_BYTES of its versions' changes (but its first), the cursor
      // leading on to the next.
      const pages: [number, number][][] = [];
      let after = "";
      for (let page = 0; page < 3; page++) {
        const list = await read<{ data: VersionRecord[]; has_more: boolean; next_page?: string }>(
          "GET",
          `${base}/versions?limit=3${after}`,
        );
        expect([list.status, list.body.has_more]).toEqual([200, true]);
        pages.push(list.body.data.map((v) => [v.version, v.changes.length]));
        after = `&after=${encodeURIComponent(list.body.next_page ?? "")}`;
      }
      // The two large versions together are over it; one with the smaller ones after it is not.
      expect(pages).toEqual([
        [[full + 2, NAMES + 1]],
        [
          [full + 1, NAMES + 1],
          [full, PER_REQUEST],
          [full - 1, PER_REQUEST],
        ],
        [
          [full - 2, PER_REQUEST],
          [full - 3, PER_REQUEST],
          [full - 4, PER_REQUEST],
        ],
      ]);
    };
    const expectEntries = async (read: typeof call) => {
      // Entries this large are a page each (AUDIT_PAGE_BYTES), the cursor leading to the next.
      const data: AuditEntryRecord[] = [];
      let after = "";
      for (let page = 0; page < 3; page++) {
        const log = await read<{ data: AuditEntryRecord[]; has_more: boolean; next_page?: string }>(
          "GET",
          `/v1/orgs/${owner.orgId}/audit-log?action=applyEnvironmentVariableChanges&action=restoreEnvironmentVariableVersion&action=exportEnvironmentVariables&limit=3${after}`,
        );
        expect(log.status).toBe(200);
        // The first two pages are cut after their one large entry; the third goes on to smaller ones.
        if (page < 2) expect([log.body.data.length, log.body.has_more]).toEqual([1, true]);
        data.push(...log.body.data);
        after = `&after=${encodeURIComponent(log.body.next_page ?? "")}`;
      }
      const [exportEntry, restoreEntry, replaceEntry] = data;
      expect(exportEntry?.changes).toEqual({ names: { from: null, to: names } });
      expect(Object.keys(restoreEntry?.changes ?? {})).toHaveLength(NAMES + 1);
      expect(restoreEntry?.changes?.[names[7_999] as string]).toEqual({ from: null, to: "string" });
      expect(replaceEntry?.changes).toEqual({
        ONLY: { from: null, to: "string" },
        ...Object.fromEntries(names.map((name) => [name, { from: "string", to: null }])),
      });
      return data.slice(0, 3);
    };
    await expectVersions(call);
    const entries = await expectEntries(call);

    // The audit stream sends each entry whole.
    await caughtUp(owner, stream.id, 30_000);
    const sent = (await batches(bucket)).flatMap((b) => b.entries);
    for (const entry of entries) expect(sent.find((e) => e.id === entry.id)).toEqual(entry);

    // Nothing stored is near D1's limit on a row.
    const largest = async (sql: string) =>
      Number((await env.DB.prepare(sql).bind(owner.orgId).first<{ n: number }>())?.n ?? 0);
    const inLog = await largest(
      "SELECT max(length(CAST(p.chunk AS BLOB))) AS n FROM audit_log_parts p JOIN audit_log a ON a.id = p.entry_id WHERE a.org_id = ?",
    );
    const inVersions = await largest(
      "SELECT max(length(CAST(p.chunk AS BLOB))) AS n FROM variable_version_parts p JOIN projects j ON j.id = p.project_id WHERE j.org_id = ?",
    );
    expect([inLog > 0, inVersions > 0]).toEqual([true, true]);
    expect(Math.max(inLog, inVersions)).toBeLessThan(D1_VALUE_BYTES);

    // Moved to the other database, with its parts: the same records.
    await moveOrg(owner.orgId, "DB_ORG_2");
    const moved = d1WithLimits(env.DB_ORG_2);
    const afterMove = <T>(method: string, path: string, body?: unknown) =>
      request<T>(method, path, { key: owner.key, body, bindings: { DB_ORG_2: moved.DB } });
    await expectVersions(afterMove);
    expect(await expectEntries(afterMove)).toEqual(entries);
    // Those reads went through the limits' checks (the moved organization's database is DB_ORG_2).
    expect(moved.largest()).toBeGreaterThan(0);

    // Retention removes an entry with its parts.
    const parts = () =>
      env.DB_ORG_2.prepare("SELECT count(*) AS n FROM audit_log_parts WHERE entry_id = ?")
        .bind(entries[2]?.id)
        .first<{ n: number }>();
    expect((await parts())?.n).toBeGreaterThan(1);
    await env.DB_ORG_2.prepare("UPDATE audit_log SET created_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 401 * 86_400_000).toISOString(), entries[2]?.id)
      .run();
    const ctx = createServiceContext({ env, requestId: "test-retention", database: "DB_ORG_2" });
    await purgeExpiredAuditEntries(ctx);
    expect((await parts())?.n).toBe(0);
  }, 120_000);
});
