/**
 * Keyset pagination of the project lists (API_CONTRACT §4), walked end to end.
 *
 * Rows are inserted straight into D1 so that several share one `created_at` (ties must be
 * broken by `id` in the sort direction). The walks are long; the test configuration raises
 * the rate limits, so one key serves them all.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../src/db/client";
import { projectMembers, projects } from "../../../src/db/schema";
import { newId } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { type Caller, createCaller, createOrgWithOwner, type Org } from "../../helpers/factories";

type ProjectItem = { id: string; created_at: string };
type Page = { data: ProjectItem[]; has_more: boolean; next_page?: string };

const NEXT_PAGE = /^[a-zA-Z0-9+/=]+$/;
const BASE_MS = Date.parse("2026-01-01T00:00:00.000Z");

/** `n` projects of `org`, three to a `created_at` (so ties are common), in random id order. */
async function seedProjects(orgId: string, n: number, baseMs = BASE_MS): Promise<ProjectItem[]> {
  const db = createDb(env.DB);
  const rows = Array.from({ length: n }, (_, i) => {
    const at = new Date(baseMs + Math.floor(i / 3) * 1000).toISOString();
    const id = newId();
    return {
      id,
      orgId,
      name: `p-${id}`,
      nameKey: `p-${id}`.toLowerCase(),
      description: null,
      icon: null,
      repoId: null,
      defaultEnvironmentId: newId(),
      connectionStatus: "connected" as const,
      createdAt: at,
      updatedAt: at,
    };
  });
  // Inserted in shuffled order: the list must not depend on insertion (rowid) order.
  // One row per statement: D1 binds at most 100 parameters to one statement.
  const [head, ...tail] = [...rows]
    .sort(() => Math.random() - 0.5)
    .map((row) => db.insert(projects).values(row));
  if (head) await db.batch([head, ...tail]);
  return rows.map((r) => ({ id: r.id, created_at: r.createdAt }));
}

function ascending(items: ProjectItem[]): string[] {
  return [...items]
    .sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
    )
    .map((p) => p.id);
}

const query = (params: Record<string, string | number | undefined>) => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined);
  return entries.length
    ? `?${entries.map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`).join("&")}`
    : "";
};

/** Walks a list to its end; checks every page's shape, returns the ids in order and the cursors. */
async function walk(
  key: string,
  path: string,
  params: { sort_by?: string; limit?: number },
): Promise<{ ids: string[]; cursors: string[] }> {
  const ids: string[] = [];
  const cursors: string[] = [];
  let after: string | undefined;
  for (let pageNo = 0; pageNo < 100; pageNo++) {
    const res = await request<Page>("GET", path + query({ ...params, after }), { key });
    expect(res.status, res.raw).toBe(200);
    const page = res.body;
    ids.push(...page.data.map((p) => p.id));
    if (!page.has_more) {
      expect("next_page" in page).toBe(false);
      return { ids, cursors };
    }
    expect(page.data).toHaveLength(params.limit ?? 20);
    expect(page.next_page).toMatch(NEXT_PAGE);
    after = page.next_page as string;
    cursors.push(after);
  }
  throw new Error("the walk did not end");
}

/** The same cursor re-encoded with an extra non-ASCII field, so that its base64 holds `+` and `/`. */
function withPlusAndSlash(cursor: string): string {
  const payload = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(cursor), (c) => c.charCodeAt(0))));
  // U+FFFF is EF BF BF in UTF-8, "77+/" in base64 when 3-byte aligned; shift until it is.
  for (let shift = 0; shift < 3; shift++) {
    const pad = `${"a".repeat(shift)}\uffff\uffff`;
    const bytes = new TextEncoder().encode(JSON.stringify({ ...payload, pad }));
    const b64 = btoa(String.fromCharCode(...bytes));
    if (b64.includes("+") && b64.includes("/")) return b64;
  }
  throw new Error("no padding gave both + and /");
}

type World = { org: Org; owner: Caller; items: ProjectItem[]; asc: string[] };

async function world(n = 25): Promise<World> {
  const { org, owner } = await createOrgWithOwner();
  const items = await seedProjects(org.id, n);
  return { org, owner, items, asc: ascending(items) };
}

const ORDERS: Array<{ sort_by: string | undefined; direction: "asc" | "desc" }> = [
  { sort_by: "created_at", direction: "asc" },
  { sort_by: "+created_at", direction: "asc" },
  { sort_by: "-created_at", direction: "desc" },
  { sort_by: undefined, direction: "desc" },
];

describe.each([
  ["GET /v1/projects", (_w: World) => "/v1/projects"],
  ["GET /v1/orgs/{org_id}/projects", (w: World) => `/v1/orgs/${w.org.id}/projects`],
])("%s walks", (_name, pathOf) => {
  it.each(ORDERS)(
    "sort_by=$sort_by: every record once, in order, ties by id, at limits 4 and 7",
    async ({ sort_by, direction }) => {
      const w = await world();
      const expected = direction === "asc" ? w.asc : [...w.asc].reverse();
      for (const limit of [4, 7]) {
        const { ids, cursors } = await walk(w.owner.key, pathOf(w), { sort_by, limit });
        expect(ids).toEqual(expected);
        expect(cursors).toHaveLength(Math.ceil(25 / limit) - 1);
      }
    },
  );
});

describe("page boundaries", () => {
  it("default limit is 20; 240 and 1 are allowed; an exact fit ends without next_page", async () => {
    const w = await world(25);
    const key = w.owner.key;
    const first = await request<Page>("GET", "/v1/projects", { key });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.has_more).toBe(true);
    const all = await request<Page>("GET", "/v1/projects?limit=240", { key });
    expect(all.body.data.map((p) => p.id)).toEqual([...w.asc].reverse());
    expect(all.body.has_more).toBe(false);
    expect("next_page" in all.body).toBe(false);
    const exact = await request<Page>("GET", "/v1/projects?limit=025", { key });
    expect(exact.body).toMatchObject({ has_more: false });
    expect(exact.body.data).toHaveLength(25);
    expect("next_page" in exact.body).toBe(false);
    const one = await walk(key, "/v1/projects", { limit: 5, sort_by: "created_at" });
    expect(one.ids).toEqual(w.asc);
    expect(one.cursors).toHaveLength(4);
  });

  it("an empty organization lists an empty last page", async () => {
    const { owner } = await createOrgWithOwner();
    const res = await request<Page>("GET", "/v1/projects", { key: owner.key });
    expect(res.body).toEqual({ data: [], has_more: false });
  });

  it("a member walks only the projects it is a member of", async () => {
    const w = await world(25);
    const member = await createCaller(w.org, "member", w.owner);
    const mine = w.asc.filter((_, i) => i % 3 !== 1);
    const db = createDb(env.DB);
    await db
      .insert(projectMembers)
      .values(
        mine.map((projectId) => ({
          id: newId(),
          projectId,
          accountId: member.accountId,
          role: "viewer" as const,
          createdAt: new Date().toISOString(),
        })),
      )
      .run();
    for (const { sort_by, direction } of ORDERS) {
      const { ids } = await walk(member.key, "/v1/projects", { sort_by, limit: 4 });
      expect(ids).toEqual(direction === "asc" ? mine : [...mine].reverse());
    }
  });

  it("never repeats or skips a record that existed for the whole walk, while others come and go", async () => {
    const w = await world(25);
    const key = w.owner.key;
    const db = createDb(env.DB);
    const seen: string[] = [];
    let after: string | undefined;
    const removed = new Set<string>();
    for (let pageNo = 0; ; pageNo++) {
      const res = await request<Page>(
        "GET",
        `/v1/projects${query({ limit: 4, sort_by: "created_at", after })}`,
        {
          key,
        },
      );
      seen.push(...res.body.data.map((p) => p.id));
      if (!res.body.has_more) break;
      after = res.body.next_page;
      // Between pages: delete a record not seen yet, and add records before and after the cursor.
      const unseen = w.asc.find((id) => !seen.includes(id) && !removed.has(id));
      if (unseen && pageNo % 2 === 0) {
        await db.delete(projects).where(eq(projects.id, unseen)).run();
        removed.add(unseen);
      }
      await seedProjects(w.org.id, 1, BASE_MS - 60_000);
      await seedProjects(w.org.id, 1, BASE_MS + 60_000 + pageNo);
    }
    const stable = w.asc.filter((id) => !removed.has(id));
    const seenStable = seen.filter((id) => w.asc.includes(id));
    expect(seenStable).toEqual(stable);
    expect(new Set(seen).size).toBe(seen.length);
  });
});

describe("cursors", () => {
  it("accepts `after` in standard, URL-safe and unpadded form, and with spaces for `+`", async () => {
    const w = await world(25);
    const key = w.owner.key;
    const cursors: Array<{ sort: string; cursor: string }> = [];
    for (const sort of ["created_at", "-created_at"]) {
      const walked = await walk(key, "/v1/projects", { sort_by: sort, limit: 5 });
      cursors.push(...walked.cursors.map((cursor) => ({ sort, cursor })));
    }
    // Base64 of ASCII text never holds `+` or `/`, so real cursors cannot exercise those rules.
    // Knowing the format (white-box), add a non-ASCII field the decoder ignores.
    const plus = cursors.map(({ sort, cursor }) => ({ sort, cursor: withPlusAndSlash(cursor) }));
    for (const { cursor } of plus) expect(cursor).toMatch(/\+.*\/|\/.*\+/);
    const key2 = w.owner.key;
    for (const { sort, cursor } of [...cursors, ...plus]) {
      const page = (after: string) =>
        request<Page>("GET", `/v1/projects${query({ sort_by: sort, limit: 5, after })}`, { key: key2 });
      const reference = await page(cursor);
      expect(reference.status, reference.raw).toBe(200);
      const urlSafe = cursor.replace(/\+/g, "-").replace(/\//g, "_");
      for (const variant of [urlSafe, urlSafe.replace(/=+$/, ""), cursor.replace(/\+/g, " ")]) {
        const res = await page(variant);
        expect(res.status, `${variant}: ${res.raw}`).toBe(200);
        expect(res.body).toEqual(reference.body);
      }
      // A raw `+` in a query string arrives as a space.
      const raw = await request<Page>("GET", `/v1/projects?sort_by=${sort}&limit=5&after=${cursor}`, {
        key: key2,
      });
      expect(raw.body).toEqual(reference.body);
    }
    // The padded cursor names the same position as the real one.
    const real = cursors[0] as { sort: string; cursor: string };
    const padded = plus[0] as { sort: string; cursor: string };
    const a = await request<Page>(
      "GET",
      `/v1/projects${query({ sort_by: real.sort, limit: 5, after: real.cursor })}`,
      {
        key,
      },
    );
    const b = await request<Page>(
      "GET",
      `/v1/projects${query({ sort_by: real.sort, limit: 5, after: padded.cursor })}`,
      {
        key,
      },
    );
    expect(b.body).toEqual(a.body);
  });

  it("`created_at` and `+created_at` are one order; the default is `-created_at`", async () => {
    const w = await world(10);
    const key = w.owner.key;
    const plain = await request<Page>("GET", "/v1/projects?sort_by=created_at&limit=4", { key });
    const cont = await request<Page>(
      "GET",
      `/v1/projects${query({ sort_by: "+created_at", limit: 6, after: plain.body.next_page })}`,
      { key },
    );
    expect(cont.status).toBe(200);
    expect([...plain.body.data, ...cont.body.data].map((p) => p.id)).toEqual(w.asc);
    // Sent unencoded, the `+` arrives as a space; it is still `+created_at`.
    const rawPlus = await request<Page>("GET", "/v1/projects?sort_by=+created_at&limit=4", { key });
    expect(rawPlus.status).toBe(200);
    expect(rawPlus.body).toEqual(plain.body);
    const byDefault = await request<Page>("GET", "/v1/projects?limit=4", { key });
    const desc = await request<Page>(
      "GET",
      `/v1/projects${query({ sort_by: "-created_at", limit: 6, after: byDefault.body.next_page })}`,
      { key },
    );
    expect([...byDefault.body.data, ...desc.body.data].map((p) => p.id)).toEqual([...w.asc].reverse());
  });

  it("refuses a cursor made under the other order, both ways, with 400 bad_input", async () => {
    const w = await world(10);
    const key = w.owner.key;
    const asc = (await request<Page>("GET", "/v1/projects?sort_by=created_at&limit=3", { key })).body
      .next_page as string;
    const desc = (await request<Page>("GET", "/v1/projects?limit=3", { key })).body.next_page as string;
    for (const [sort_by, after] of [
      ["-created_at", asc],
      [undefined, asc],
      ["created_at", desc],
      ["+created_at", desc],
    ] as const) {
      const res = await request<ErrorBody>("GET", `/v1/projects${query({ sort_by, after })}`, { key });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("bad_input");
      expect(res.body.cause?.map((c) => c.path)).toEqual(["after"]);
    }
  });

  it.each([
    ["garbage characters", "!!!not a cursor***"],
    ["not base64", "abcde"],
    ["base64 of text", btoa("hello world")],
    ["base64 of a JSON number", btoa("42")],
    ["base64 of null", btoa("null")],
    ["base64 of another object", btoa(JSON.stringify({ a: 1 }))],
    [
      "base64 of a cursor-like object with a wrong version",
      btoa(JSON.stringify({ v: 2, o: "desc", f: "", c: "x", i: "y" })),
    ],
    [
      "base64 of a cursor-like object with a wrong type",
      btoa(JSON.stringify({ v: 1, o: "desc", f: "", c: 5, i: "y" })),
    ],
    [
      "base64 of a cursor whose position is not a timestamp",
      btoa(JSON.stringify({ v: 1, o: "desc", f: "", c: "notadate", i: "7Hq3VnT5m2WcXbQ9pLk4Rz" })),
    ],
    [
      "base64 of a cursor whose position is not an identifier",
      btoa(JSON.stringify({ v: 1, o: "desc", f: "", c: "2026-11-22T10:04:05.123Z", i: "x" })),
    ],
    ["base64 of invalid UTF-8", btoa("\xff\xfe\xfd")],
    ["too long", "A".repeat(1025)],
    ["empty", ""],
  ])("refuses %s with 400 bad_input", async (_what, after) => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("GET", `/v1/projects?after=${encodeURIComponent(after)}`, {
      key: owner.key,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain("after");
  });
});

describe("query validation", () => {
  it.each([
    ["0"],
    ["241"],
    ["1.5"],
    ["abc"],
    ["-1"],
    [""],
    ["1e3"],
    ["1e1"],
    ["0x10"],
    ["%205"],
    ["%2B5"],
    ["5.0"],
  ])("limit=%s → 400 bad_input", async (limit) => {
    const { owner } = await createOrgWithOwner();
    const res = await request<ErrorBody>("GET", `/v1/projects?limit=${limit}`, { key: owner.key });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toEqual(["limit"]);
  });

  it.each([["name"], ["created"], ["-name"], ["CREATED_AT"], ["created_at,id"]])(
    "sort_by=%s → 400 bad_input",
    async (sortBy) => {
      const { org, owner } = await createOrgWithOwner();
      for (const path of ["/v1/projects", `/v1/orgs/${org.id}/projects`]) {
        const res = await request<ErrorBody>("GET", `${path}?sort_by=${encodeURIComponent(sortBy)}`, {
          key: owner.key,
        });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("bad_input");
        expect(res.body.cause?.map((c) => c.path)).toEqual(["sort_by"]);
      }
    },
  );
});
