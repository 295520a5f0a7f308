/**
 * An audit log page holds at most AUDIT_PAGE_BYTES of its entries' free text, but its first entry
 * (src/services/audit/log.ts): an entry lists every name an export or a replace touched (§18), so
 * 240 of them could be hundreds of MB in one isolate. A page cut short has fewer than `limit`
 * entries, `has_more` and a cursor after its last; walking the pages repeats and skips nothing
 * (§4), by time and by sequence (§30), in the organization's list and the project's.
 */
import { describe, expect, it } from "vitest";
import { AUDIT_PAGE_BYTES } from "../../../src/services/audit/log";
import { request } from "../../helpers/api";
import { measuringD1 } from "../../helpers/d1-trips";
import type { Caller } from "../../helpers/factories";
import { applied, exportScope, setsWorld } from "../../helpers/variable-sets";

/** 500 names of 255 characters: an export's entry lists them all (~130 KB). */
const NAMES = Array.from({ length: 500 }, (_, i) => `N${String(i).padStart(3, "0")}_`.padEnd(255, "x"));
const EXPORTS = 40;

type Entry = { id: string; sequence: number; action: string; changes: { names?: { to: string[] } } };
type Envelope = { data: Entry[]; has_more: boolean; next_page?: string };

/** Every page of `path` (a query string already on it), with the bytes each read from D1. */
async function walk(caller: Caller, path: string) {
  const pages: { entries: Entry[]; hasMore: boolean; bytes: number }[] = [];
  let after: string | undefined;
  do {
    const { DB, read } = measuringD1();
    const res = await request<Envelope>(
      "GET",
      `${path}${after ? `&after=${encodeURIComponent(after)}` : ""}`,
      { key: caller.key, bindings: { DB } },
    );
    expect(res.status, res.raw).toBe(200);
    pages.push({ entries: res.body.data, hasMore: res.body.has_more, bytes: read.bytes });
    after = res.body.next_page;
    expect(after !== undefined).toBe(res.body.has_more);
  } while (after);
  return pages;
}

describe("an audit log page of large entries", () => {
  it("is cut at AUDIT_PAGE_BYTES, and its pages walk every entry once, by time and by sequence", async () => {
    const { org, owner, project, paths } = await setsWorld();
    await applied(owner, paths.environment, {
      variables: Object.fromEntries(NAMES.map((name) => [name, { type: "string", value: "v" }])),
    });
    for (let i = 0; i < EXPORTS; i++) expect((await exportScope(owner, paths.environment)).status).toBe(200);
    const entrySize = JSON.stringify(NAMES).length;
    const filter = "action=exportEnvironmentVariables&limit=240";
    const lists = {
      "the organization's, newest first": `/v1/orgs/${org.id}/audit-log?${filter}`,
      "the project's, oldest first": `/v1/projects/${project.id}/audit-log?${filter}&sort_by=created_at`,
      "by sequence": `/v1/orgs/${org.id}/audit-log?${filter}&after_sequence=0`,
    };
    for (const [name, path] of Object.entries(lists)) {
      const pages = await walk(owner, path);
      const [first] = pages;
      // The first page stops where its entries pass the bound: fewer than `limit`, more to come.
      expect(first?.entries.length, name).toBeLessThan(EXPORTS);
      expect(first?.entries.length, name).toBeGreaterThanOrEqual(
        Math.floor(AUDIT_PAGE_BYTES / entrySize) - 1,
      );
      expect(first?.hasMore, name).toBe(true);
      for (const page of pages) {
        expect(page.bytes, name).toBeLessThan(AUDIT_PAGE_BYTES + 2 * entrySize);
        expect(page.entries.length, name).toBeGreaterThan(0);
      }
      const entries = pages.flatMap((p) => p.entries);
      expect(new Set(entries.map((e) => e.id)).size, name).toBe(EXPORTS);
      expect(entries.every((e) => e.changes.names?.to.length === NAMES.length)).toBe(true);
      const sequences = entries.map((e) => e.sequence);
      const ordered = [...sequences].sort((a, b) => a - b);
      expect(sequences, name).toEqual(name.includes("newest") ? ordered.reverse() : ordered);
    }
  });

  it("of small entries is as before: `limit` entries, the cut never reached", async () => {
    const { org, owner, paths } = await setsWorld();
    await applied(owner, paths.environment, { variables: { ONE: { type: "string", value: "1" } } });
    for (let i = 0; i < 5; i++) await exportScope(owner, paths.environment);
    const pages = await walk(owner, `/v1/orgs/${org.id}/audit-log?action=exportEnvironmentVariables&limit=2`);
    expect(pages.map((p) => p.entries.length)).toEqual([2, 2, 1]);
  });
});
