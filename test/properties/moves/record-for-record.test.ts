/**
 * API_CONTRACT §32 "Once completed": an organization moved to another database, and back, reads as
 * it did record for record (the same ids, fields, ETags, list orders and cursors), with its audit
 * entries and their sequences; an Idempotency-Key used before replays after; its keys (derived and
 * exchanged) work; its rate-limit windows are unchanged; an X-D1-Bookmark from before is harmless;
 * `database` names the target; and the source holds none of its rows.
 */
import { describe, expect, it } from "vitest";
import { internalOk, request } from "../../helpers/api";
import { type Caller, unique } from "../../helpers/factories";
import { auditActions, moveOrg, orgRowsIn, readAll, world } from "../../helpers/moves";

/**
 * What a move changes on purpose: the limits' `reset` counts down with the clock, and a stream's
 * `pending` counts the move's own two entries.
 */
async function limitsAndStream(caller: Caller, streamId: string) {
  const limits = await request<{ limits: { name: string; limit: number; used: number }[] }>(
    "GET",
    `/v1/orgs/${caller.orgId}/limits`,
    { key: caller.key },
  );
  const stream = await request<{ pending: number; [field: string]: unknown }>(
    "GET",
    `/v1/audit-streams/${streamId}`,
    {
      key: caller.key,
    },
  );
  return {
    limits: limits.body.limits.map(({ name, limit, used }) => ({ name, limit, used })),
    stream: stream.body,
  };
}

/** Every cursor of a list, paged two at a time. */
async function pages(caller: Caller, path: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
    const res = await request<{ data: unknown[]; next_cursor: string | null }>("GET", `${path}${query}`, {
      key: caller.key,
    });
    expect(res.status, res.raw).toBe(200);
    seen.push(res.body);
    cursor = res.body.next_cursor;
  } while (cursor);
  return seen;
}

describe("a moved organization reads as it did", () => {
  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const) {
    it(`from ${from} to ${to} and back: every record, ETag, order and cursor; its entries and keys; nothing left behind`, async () => {
      const w = await world(from);
      const { owner, org } = w;
      // An Idempotency-Key used before the move, and a bookmark from before it.
      const keyedName = unique("keyed");
      const keyed = await request<{ id: string }>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: keyedName },
        headers: { "idempotency-key": `move-${org.id}` },
      });
      expect(keyed.status).toBe(201);
      const bookmark = keyed.headers.get("x-d1-bookmark") as string;
      const paths = [...w.paths, `/v1/projects/${keyed.body.id}`];
      const before = await readAll(owner, paths);
      const counted = await limitsAndStream(owner, w.streamId);
      const pagesBefore = await pages(owner, "/v1/projects");
      const entriesBefore = await auditActions(owner);
      const windowBefore = await request("GET", "/v1/orgs", { key: owner.key });
      const remaining = Number(windowBefore.headers.get("x-ratelimit-remaining"));

      const move = await moveOrg(org.id, to);
      expect(move).toMatchObject({ org_id: org.id, from, to, state: "completed" });
      expect(move.rows_copied).toBeGreaterThan(30);
      expect(move.finished_at).not.toBeNull();
      expect(await internalOk("GET", `/orgs/${org.id}`)).toMatchObject({ id: org.id, database: to });

      // The rate-limit window went on counting where it was (one request since, this one).
      const windowAfter = await request("GET", "/v1/orgs", { key: owner.key });
      expect(Number(windowAfter.headers.get("x-ratelimit-remaining"))).toBe(remaining - 1);
      expect(await readAll(owner, paths)).toEqual(before);
      expect(await pages(owner, "/v1/projects")).toEqual(pagesBefore);
      expect(await limitsAndStream(owner, w.streamId)).toEqual({
        ...counted,
        stream: { ...counted.stream, pending: counted.stream.pending + 2 },
      });
      // Its entries, with their sequences, then the move's two.
      const entriesAfter = await auditActions(owner);
      expect(entriesAfter.slice(0, entriesBefore.length)).toEqual(entriesBefore);
      const added = entriesAfter.slice(entriesBefore.length);
      expect(added.map((entry) => entry.action)).toEqual([
        "internal.moveOrganization",
        "internal.completeMove",
      ]);
      expect(entriesAfter.map((entry) => entry.sequence)).toEqual(entriesAfter.map((_, i) => i + 1));

      // The Idempotency-Key replays; a bookmark from before is harmless.
      const replay = await request<{ id: string }>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: keyedName },
        headers: { "idempotency-key": `move-${org.id}` },
      });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(replay.body.id).toBe(keyed.body.id);
      const old = await request("GET", "/v1/projects", {
        key: owner.key,
        headers: { "x-d1-bookmark": bookmark },
      });
      expect(old.status).toBe(200);

      // Every kind of key still works, and writes land in the new database.
      for (const key of [w.derived.key, w.exchanged.key, w.member.key]) {
        expect((await request("GET", "/v1/projects", { key })).status).toBe(200);
      }
      const made = await request<{ id: string }>("POST", "/v1/projects", {
        key: owner.key,
        body: { name: unique("after") },
      });
      expect(made.status, made.raw).toBe(201);
      expect((await orgRowsIn(to, org.id)).projects).toBe(4);

      // The source holds none of its rows (the directory's own entry stays where the directory is).
      expect(await orgRowsIn(from, org.id)).toEqual(from === "DB" ? { organizations: 1 } : {});

      // And back again.
      const afterFirst = await readAll(owner, paths);
      await moveOrg(org.id, from);
      expect(await readAll(owner, paths)).toEqual(afterFirst);
      expect(await orgRowsIn(to, org.id)).toEqual(to === "DB" ? { organizations: 1 } : {});
      expect(await internalOk("GET", `/orgs/${org.id}`)).toMatchObject({ database: from });
      const final = await auditActions(owner);
      expect(final.map((entry) => entry.sequence)).toEqual(final.map((_, i) => i + 1));
    });
  }
});
