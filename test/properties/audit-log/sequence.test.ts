/**
 * API_CONTRACT §30: every audit entry's `sequence` (1 for an organization's first, one more for
 * each next, in commit order, no gap, no repeat; entries made before numbered in `created_at`, `id`
 * order), and the lists' `after_sequence`.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import type { AuditList } from "../../helpers/audit-log";
import { createOrgWithOwnerIn, ORG_DATABASES } from "../../helpers/databases";
import { expectError } from "../../helpers/expect";
import { type Caller, createOrgWithOwner, createProject, unique } from "../../helpers/factories";

const orgLog = (caller: Caller, query = "") =>
  request<AuditList>("GET", `/v1/orgs/${caller.orgId}/audit-log${query}`, { key: caller.key });

/** Every entry of the organization, oldest sequence first (all pages of `after_sequence=0`). */
async function wholeLog(caller: Caller) {
  const entries: AuditList["data"] = [];
  let query = "?after_sequence=0&limit=240";
  for (;;) {
    const page = await orgLog(caller, query);
    expect(page.status, page.raw).toBe(200);
    entries.push(...page.body.data);
    if (!page.body.next_page) return entries;
    query = `?after_sequence=0&limit=240&after=${encodeURIComponent(page.body.next_page)}`;
  }
}

describe("sequence", () => {
  for (const database of ORG_DATABASES) {
    it(`is 1, 2, 3… per organization in commit order, with no gap and no repeat under concurrent writes (${database})`, async () => {
      const { owner } = await createOrgWithOwnerIn(database);
      const { owner: neighbour } = await createOrgWithOwnerIn(database);
      const project = await createProject(owner);
      const writes = await Promise.all([
        ...Array.from({ length: 12 }, () =>
          request("POST", "/v1/projects", { key: owner.key, body: { name: unique("seq") } }),
        ),
        ...Array.from({ length: 12 }, (_, i) =>
          request("POST", `/v1/environments/${project.default_environment_id}/variables`, {
            key: owner.key,
            body: { name: `V${i}`, type: "string", value: "v" },
          }),
        ),
        ...Array.from({ length: 6 }, () =>
          request("POST", "/v1/projects", { key: neighbour.key, body: { name: unique("other") } }),
        ),
      ]);
      for (const res of writes) expect(res.status, res.raw).toBe(201);
      const entries = await wholeLog(owner);
      expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i + 1));
      // The organization's creation, its owner's membership and key, the first project, the 24 writes.
      expect(entries.length).toBe(4 + 24);
      // Commit order: each write's entry is numbered in the order its batch ran, which is the order
      // of the rows in the database's own insertion log.
      const rowids = await env[database]
        .prepare("SELECT sequence FROM audit_log WHERE org_id = ? ORDER BY rowid")
        .bind(owner.orgId)
        .all<{ sequence: number }>();
      expect(rowids.results.map((r) => r.sequence)).toEqual(entries.map((e) => e.sequence));
      // Another organization counts on its own.
      expect((await wholeLog(neighbour)).map((e) => e.sequence)).toEqual(
        Array.from({ length: 9 }, (_, i) => i + 1),
      );
    });
  }

  it("a refused write takes no number", async () => {
    const { owner } = await createOrgWithOwner();
    const before = (await wholeLog(owner)).length;
    const name = unique("dup");
    await createProject(owner, { name });
    expect((await request("POST", "/v1/projects", { key: owner.key, body: { name } })).status).toBe(409);
    await createProject(owner);
    expect((await wholeLog(owner)).map((e) => e.sequence)).toEqual(
      Array.from({ length: before + 2 }, (_, i) => i + 1),
    );
  });

  it("entries made before it are numbered by the migration in created_at, id order", async () => {
    const { owner } = await createOrgWithOwner();
    const org = owner.orgId;
    // Three entries written the old way (no sequence), in an order their created_at does not follow.
    for (const [id, at] of [
      ["old-c", "2020-01-01T00:00:03.000Z"],
      ["old-a", "2020-01-01T00:00:01.000Z"],
      ["old-b", "2020-01-01T00:00:01.000Z"],
    ]) {
      await env.DB.prepare(
        "INSERT INTO audit_log (id, org_id, action, target_type, target_id, actor_type, request_id, created_at) VALUES (?, ?, 'test', 'x', 'x', 'admin', 'r', ?)",
      )
        .bind(id, `${org}-legacy`, at)
        .run();
    }
    // The migration's own statement (migrations/0015), narrowed to this test's organization.
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0015_"));
    const numbering = migration?.queries.find((q) => q.includes("row_number() OVER"));
    expect(numbering).toBeDefined();
    const narrowed = (numbering ?? "").replace(
      "WHERE `org_id` IS NOT NULL",
      `WHERE \`org_id\` = '${org}-legacy'`,
    );
    await env.DB.prepare(narrowed).run();
    const numbered = await env.DB.prepare(
      "SELECT id, sequence FROM audit_log WHERE org_id = ? ORDER BY sequence",
    )
      .bind(`${org}-legacy`)
      .all<{ id: string; sequence: number }>();
    expect(numbered.results).toEqual([
      { id: "old-a", sequence: 1 },
      { id: "old-b", sequence: 2 },
      { id: "old-c", sequence: 3 },
    ]);
  });
});

describe("after_sequence", () => {
  it("lists the entries after it, sequence ascending, paged by next_page; both lists", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    for (let i = 0; i < 5; i++) {
      await request("POST", `/v1/environments/${project.default_environment_id}/variables`, {
        key: owner.key,
        body: { name: `V${i}`, type: "string", value: "v" },
      });
    }
    const all = await wholeLog(owner);
    const after = all[3]?.sequence ?? 0;
    const first = await orgLog(owner, `?after_sequence=${after}&limit=2`);
    expect(first.body.data.map((e) => e.sequence)).toEqual([after + 1, after + 2]);
    expect(first.body.has_more).toBe(true);
    const second = await orgLog(
      owner,
      `?after_sequence=${after}&limit=2&after=${encodeURIComponent(first.body.next_page ?? "")}`,
    );
    expect(second.body.data.map((e) => e.sequence)).toEqual([after + 3, after + 4]);
    // Past the end: an empty page.
    const last = all.at(-1)?.sequence ?? 0;
    expect((await orgLog(owner, `?after_sequence=${last}`)).body).toEqual({ data: [], has_more: false });
    // With a filter, and whatever sort_by says.
    const filtered = await orgLog(
      owner,
      `?after_sequence=0&action=createEnvironmentVariable&sort_by=-created_at`,
    );
    expect(filtered.body.data.map((e) => e.action)).toEqual(Array(5).fill("createEnvironmentVariable"));
    const sequences = filtered.body.data.map((e) => e.sequence);
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    // The project's list: its own entries after the sequence, in order.
    const projectLog = await request<AuditList>(
      "GET",
      `/v1/projects/${project.id}/audit-log?after_sequence=${after}`,
      {
        key: owner.key,
      },
    );
    expect(projectLog.body.data.map((e) => e.sequence)).toEqual(
      all.filter((e) => e.sequence > after && e.project_id === project.id).map((e) => e.sequence),
    );
  });

  it("an integer ≥ 0; a cursor of a sequence page is refused by a list without it (§4)", async () => {
    const { owner } = await createOrgWithOwner();
    for (const bad of ["-1", "1.5", "x", ""]) {
      expectError(await orgLog(owner, `?after_sequence=${bad}`), 400, "bad_input", "after_sequence");
    }
    // Any integer ≥ 0, however long: past the last entry is an empty page, 2^53 and beyond too.
    for (const past of ["9007199254740991", "9007199254740992", "18446744073709551615", "9".repeat(40)]) {
      const res = await orgLog(owner, `?after_sequence=${past}`);
      expect([res.status, res.body.data, res.body.next_page], past).toEqual([200, [], undefined]);
    }
    const page = await orgLog(owner, "?after_sequence=0&limit=1");
    const cursor = encodeURIComponent(page.body.next_page ?? "");
    expectError(await orgLog(owner, `?after=${cursor}`), 400, "bad_input", "after");
    expectError(await orgLog(owner, `?after_sequence=0&action=x&after=${cursor}`), 400, "bad_input", "after");
  });

  it("the internal API's entries are numbered in their organization's log", async () => {
    const { owner } = await createOrgWithOwner();
    await internal("PUT", `/orgs/${owner.orgId}/limits`, { projects: 42 });
    const entries = await wholeLog(owner);
    expect(entries.at(-1)?.action).toBe("internal.replaceOrgLimits");
    expect(entries.map((e) => e.sequence)).toEqual(entries.map((_, i) => i + 1));
  });
});
