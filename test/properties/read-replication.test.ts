/**
 * D1 read replication (src/db/session.ts, src/middleware/d1-session.ts): which session each
 * request, queue message and cron run opens, read-your-writes per key through the limiter's
 * stored bookmark, and the X-D1-Bookmark header both ways.
 *
 * The local runtime has a single copy of the database, so a stale read cannot happen here;
 * what the tests assert is where each session started (`withSession`'s argument, recorded by a
 * pass-through over the real binding) and the bookmarks handed around, which is what makes a
 * replica read fresh enough in production.
 */
import {
  createExecutionContext,
  createMessageBatch,
  env,
  getQueueResult,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createServiceContext } from "../../src/context";
import worker from "../../src/index";
import {
  BOOKMARK_RETENTION_MS,
  keyBookmarkIn,
  keyBookmarkParts,
  readBookmark,
} from "../../src/rate-limit/bookmark";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import { request } from "../helpers/api";
import { runCron, SWEEP_CRON } from "../helpers/cron";
import { bookmarkOfHeader, type D1Trip, recordingD1, writes } from "../helpers/d1-trips";
import {
  type Caller,
  createCaller,
  createOrgWithOwner,
  createProject,
  type Project,
} from "../helpers/factories";
import { captureLogs } from "../helpers/logs";

const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;
/**
 * The header names the database its bookmark is of (src/db/session.ts), and a MAC follows it
 * (src/crypto/bookmarks.ts); these organizations are in `DB`.
 */
const HEADER = /^DB:[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}\.[A-Za-z0-9_-]{43}$/;

/**
 * `bookmark`: the header's bookmark without its database and MAC; `header`: the header as sent;
 * `statements`: the D1 statements the request ran; `primaryReads`: its round trips that only read, on
 * a session started on the primary (a write reaches the primary whatever its session).
 */
type Sent = {
  status: number;
  body: Record<string, unknown>;
  bookmark: string | null;
  header: string | null;
  starts: string[];
  statements: number;
  primaryReads: D1Trip[];
};

/** One request through `createApp().fetch` over the recording binding. */
async function send(
  method: string,
  path: string,
  options: {
    key?: string;
    body?: unknown;
    headers?: Record<string, string>;
    bindings?: Record<string, string>;
  } = {},
): Promise<Sent> {
  const recorded = recordingD1({ ...env, ...options.bindings });
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (options.key) headers["x-api-key"] = options.key;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const exec = createExecutionContext();
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
    recorded.env,
    exec,
  );
  const raw = await res.text();
  const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
  await waitOnExecutionContext(exec);
  const header = res.headers.get("x-d1-bookmark");
  if (header !== null) expect(header).toMatch(HEADER);
  const statements = recorded.trips.reduce((n, trip) => n + trip.sql.length, 0);
  return {
    status: res.status,
    body,
    bookmark: bookmarkOfHeader(header),
    header,
    starts: recorded.starts,
    statements,
    primaryReads: recorded.trips.filter((trip) => trip.start === "first-primary" && !writes(trip)),
  };
}

/** The request's own session is the last one it opened (authentication's comes first). */
const requestStart = (sent: Sent) => sent.starts.at(-1);

const storedBookmark = (caller: Caller) =>
  runInDurableObject(
    env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${caller.keyId}`)),
    (instance: RateLimiter, state) => {
      instance.usage(); // creates the tables if the object was emptied
      const stored = readBookmark(state.storage.sql);
      // Stored with the database it orders (src/rate-limit/bookmark.ts): these organizations' DB.
      if (stored !== undefined) expect(stored).toMatch(/^DB:/);
      return stored === undefined ? undefined : keyBookmarkParts(stored)?.bookmark;
    },
  );

async function write(caller: Caller, name: string): Promise<Sent> {
  const sent = await send("POST", "/v1/projects", { key: caller.key, body: { name } });
  expect(sent.status).toBe(201);
  expect(sent.bookmark).toMatch(BOOKMARK);
  return sent;
}

describe("read-your-writes per key", () => {
  it("a write runs on the primary; a read at once with the same key starts from its bookmark and sees it", async () => {
    const { owner } = await createOrgWithOwner();
    const created = await write(owner, "ryw-project");
    expect(requestStart(created)).toBe("first-primary");
    // Stored in the key's limiter object before the response left.
    expect(await storedBookmark(owner)).toBe(created.bookmark);

    const read = await send("GET", `/v1/projects/${created.body.id}`, { key: owner.key });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: created.body.id, name: "ryw-project" });
    expect(requestStart(read)).toBe(created.bookmark);
    expect(read.bookmark && created.bookmark && read.bookmark >= created.bookmark).toBe(true);
    // A read stores nothing: the key's bookmark is still the write's.
    expect(await storedBookmark(owner)).toBe(created.bookmark);
  });

  it("a key that never wrote reads on the nearest replica (first-unconstrained) and learns the bookmark it saw", async () => {
    const { owner } = await createOrgWithOwner();
    const read = await send("GET", "/v1/projects", { key: owner.key });
    expect(read.status).toBe(200);
    expect(requestStart(read)).toBe("first-unconstrained");
    expect(read.primaryReads).toEqual([]);
    expect(read.bookmark).toMatch(BOOKMARK);
    expect(await storedBookmark(owner)).toBeUndefined();
  });

  it("a bookmark of another database replaces the stored one (the organization moved); a bare one is of the key's own", async () => {
    const { owner } = await createOrgWithOwner();
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${owner.keyId}`));
    const later = "00000000-000000ff-00000000-00000000000000000000000000000000";
    const earlier = "00000000-00000001-00000000-00000000000000000000000000000000";
    expect(await stub.recordBookmark(`DB:${later}`)).toBe(`DB:${later}`);
    // Bare (stored before bookmarks named their database): of the same database, so older loses.
    expect(await stub.recordBookmark(earlier)).toBe(`DB:${later}`);
    // Another database's orders nothing here: it replaces the stored one, however it compares.
    expect(await stub.recordBookmark(`DB_ORG_2:${earlier}`)).toBe(`DB_ORG_2:${earlier}`);
    expect(await stub.recordBookmark(`DB_ORG_2:${later}`)).toBe(`DB_ORG_2:${later}`);
    expect(keyBookmarkIn(`DB_ORG_2:${later}`, "DB")).toBeNull();
    expect(keyBookmarkIn(`DB_ORG_2:${later}`, "DB_ORG_2")).toBe(later);
    expect(keyBookmarkIn(later, "DB")).toBe(later);
    expect(keyBookmarkIn("db:not-one", "DB")).toBeNull();
  });

  it("the key's stored bookmark only moves forward, and is forgotten after its retention", async () => {
    const { owner } = await createOrgWithOwner();
    const first = (await write(owner, "first")).bookmark as string;
    const second = (await write(owner, "second")).bookmark as string;
    expect(second > first).toBe(true);
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`key:${owner.keyId}`));
    // A write that finishes late with an older bookmark does not move it back.
    expect(await stub.recordBookmark(`DB:${first}`)).toBe(`DB:${second}`);
    expect(await storedBookmark(owner)).toBe(second);
    const refused = await runInDurableObject(stub, (instance: RateLimiter) => {
      try {
        instance.recordBookmark("not-a-bookmark");
        return "stored";
      } catch (err) {
        return String(err);
      }
    });
    expect(refused).toMatch(/not a D1 bookmark/);
    expect(await storedBookmark(owner)).toBe(second);

    await runInDurableObject(stub, (_instance: RateLimiter, state) => {
      state.storage.sql.exec("UPDATE window_hits SET at = at - 60001, until = until - 60001");
      state.storage.sql.exec("UPDATE d1_bookmark SET until = until - ?", BOOKMARK_RETENTION_MS + 1);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await storedBookmark(owner)).toBeUndefined();
    const read = await send("GET", "/v1/projects", { key: owner.key });
    expect(requestStart(read)).toBe("first-unconstrained");
  });
});

describe("the X-D1-Bookmark header", () => {
  it("is honoured by another key's read and returned; the later of the key's and the header's bookmark wins", async () => {
    const a = (await createOrgWithOwner()).owner;
    const b = (await createOrgWithOwner()).owner;
    const c = (await createOrgWithOwner()).owner;
    const byA = await write(a, "by-a");
    const byB = await write(b, "by-b");
    const [bmA, bmB] = [byA.bookmark as string, byB.bookmark as string];
    expect(bmB > bmA).toBe(true);

    // C never wrote: the header (as A's answer carried it) is all it has.
    const cReads = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": byA.header as string },
    });
    expect(cReads.status).toBe(200);
    expect(requestStart(cReads)).toBe(bmA);
    expect(cReads.bookmark && cReads.bookmark >= bmA).toBe(true);

    // A's own bookmark is older than the header's: the header wins.
    const aReads = await send("GET", "/v1/projects", {
      key: a.key,
      headers: { "x-d1-bookmark": byB.header as string },
    });
    expect(requestStart(aReads)).toBe(bmB);
    expect(aReads.bookmark && aReads.bookmark >= bmB).toBe(true);

    // B's own bookmark is later than the header's: the key's wins.
    const bReads = await send("GET", "/v1/projects", {
      key: b.key,
      headers: { "X-D1-Bookmark": byA.header as string },
    });
    expect(requestStart(bReads)).toBe(bmB);

    // A header never becomes the key's stored bookmark, even on a write.
    const cWrites = await send("POST", "/v1/projects", {
      key: c.key,
      body: { name: "by-c" },
      headers: { "X-D1-Bookmark": byB.header as string },
    });
    expect(cWrites.status).toBe(201);
    expect(requestStart(cWrites)).toBe("first-primary");
    expect(cWrites.bookmark && cWrites.bookmark > bmB).toBe(true);
    expect(await storedBookmark(c)).toBe(cWrites.bookmark);
  });

  it("names its database; one named for another database says nothing of this one and is ignored", async () => {
    const a = (await createOrgWithOwner()).owner;
    const c = (await createOrgWithOwner()).owner;
    const written = await write(a, "named");
    const bm = written.bookmark as string;
    expect(written.header?.startsWith(`DB:${bm}.`)).toBe(true);
    const named = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": written.header as string },
    });
    expect(named.status).toBe(200);
    expect(requestStart(named)).toBe(bm);
    // Relabelled: the MAC covers the database it names, so it verifies for none other.
    const relabelled = (written.header as string).replace(/^DB:/, "DB_ORG_2:");
    const elsewhere = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": relabelled },
    });
    expect(elsewhere.status).toBe(200);
    expect(requestStart(elsewhere)).toBe("first-unconstrained");
  });

  describe("one the service did not hand out", () => {
    /** A bookmark far in D1's future: a read from it would wait for a replica that never gets there. */
    const FUTURE = "7fffffff-7fffffff-7fffffff-ffffffffffffffffffffffffffffffff";
    /** The MAC of a bookmark the service handed out (a real MAC, of another bookmark). */
    const macOf = (header: string | null) => (header as string).slice((header as string).indexOf(".") + 1);
    /** The header with the last digit of its bookmark changed. */
    const altered = (header: string) => {
      const at = header.indexOf(".") - 1;
      return `${header.slice(0, at)}${header[at] === "0" ? "1" : "0"}${header.slice(at + 1)}`;
    };

    it.each([
      ["a future bookmark, bare (as answers carried before MACs)", () => FUTURE],
      ["a future bookmark with its database and no MAC", () => `DB:${FUTURE}`],
      ["a future bookmark with a made-up MAC", () => `DB:${FUTURE}.${"A".repeat(43)}`],
      [
        "a future bookmark with the MAC of a real one",
        (real: string | null) => `DB:${FUTURE}.${macOf(real)}`,
      ],
      ["a real bookmark altered (its MAC kept)", (real: string | null) => altered(real as string)],
    ])("is ignored: %s; the read runs as without it, and it is not echoed back", async (_label, forged) => {
      const a = (await createOrgWithOwner()).owner;
      const c = (await createOrgWithOwner()).owner;
      const value = forged((await write(a, "real")).header);
      await send("GET", "/v1/projects", { key: c.key }); // warms the key
      const plain = await send("GET", "/v1/projects", { key: c.key });
      const read = await send("GET", "/v1/projects", { key: c.key, headers: { "X-D1-Bookmark": value } });
      expect(read.status).toBe(200);
      // Not waited for, not sent to the primary: the nearest replica, as without the header.
      expect(requestStart(read)).toBe("first-unconstrained");
      expect(read.primaryReads).toEqual([]);
      // The answer's bookmark is the one the read saw, not the forged one.
      expect(read.header).toMatch(HEADER);
      expect(read.header).not.toBe(value);
      expect(read.bookmark && read.bookmark < FUTURE).toBe(true);
      // And it costs nothing more: the same statements as the read without it.
      expect(read.statements).toBe(plain.statements);
    });

    it("a write with one runs and answers its own bookmark, not the forged one", async () => {
      const { owner } = await createOrgWithOwner();
      const sent = await send("POST", "/v1/projects", {
        key: owner.key,
        body: { name: "forged-write" },
        headers: { "X-D1-Bookmark": `DB:${FUTURE}` },
      });
      expect(sent.status).toBe(201);
      expect(sent.bookmark && sent.bookmark < FUTURE).toBe(true);
      expect(await storedBookmark(owner)).toBe(sent.bookmark);
    });
  });

  it("a verified header costs no D1 statement: a read with one runs the statements of a read without", async () => {
    const a = (await createOrgWithOwner()).owner;
    const c = (await createOrgWithOwner()).owner;
    const written = await write(a, "cost");
    await send("GET", "/v1/projects", { key: c.key }); // warms the key
    const plain = await send("GET", "/v1/projects", { key: c.key });
    const read = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": written.header as string },
    });
    expect(requestStart(read)).toBe(written.bookmark);
    expect(read.statements).toBe(plain.statements);
  });

  it("one made under VARIABLES_KEY_PREVIOUS still verifies during a rotation; after it, it is ignored", async () => {
    const a = (await createOrgWithOwner()).owner;
    const c = (await createOrgWithOwner()).owner;
    const written = await write(a, "before-rotation");
    const newKey = "bmV3LXZhcmlhYmxlcy1rZXktMzItYnl0ZXMtbG9uZyE=";
    const rotated = { VARIABLES_KEY: newKey, VARIABLES_KEY_PREVIOUS: env.VARIABLES_KEY };
    const during = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": written.header as string },
      bindings: rotated,
    });
    expect(requestStart(during)).toBe(written.bookmark);
    const after = await send("GET", "/v1/projects", {
      key: c.key,
      headers: { "X-D1-Bookmark": written.header as string },
      bindings: { VARIABLES_KEY: newKey },
    });
    expect(requestStart(after)).toBe("first-unconstrained");
  });

  describe("without a usable VARIABLES_KEY", () => {
    const logged = captureLogs("error");

    it("answers carry none and one sent is ignored, both logged; the request still works", async () => {
      const a = (await createOrgWithOwner()).owner;
      const c = (await createOrgWithOwner()).owner;
      const written = await write(a, "unkeyed");
      const read = await send("GET", "/v1/projects", {
        key: c.key,
        headers: { "X-D1-Bookmark": written.header as string },
        bindings: { VARIABLES_KEY: "" },
      });
      expect(read.status).toBe(200);
      expect(requestStart(read)).toBe("first-unconstrained");
      expect(read.header).toBeNull();
      expect(logged.lines().map((line) => line.msg)).toEqual([
        "could not check an X-D1-Bookmark; it is ignored",
        "could not sign the answer's D1 bookmark",
      ]);
    });
  });

  it.each([
    ["a lowercase database", "db:0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b"],
    ["a database and no bookmark", "DB:"],
    ["garbage", "not-a-bookmark"],
    ["empty", ""],
    ["uppercase hex", "0000007B-0000B26E-00001538-0C3E87BB37B3DB5CC52EEDB93CD3B96B"],
    ["a short field", "0000007b-0000b26e-0001538-0c3e87bb37b3db5cc52eedb93cd3b96b"],
    ["trailing text", "0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b;x"],
  ])("malformed (%s) is 400 bad_input and changes nothing", async (_label, value) => {
    const { owner } = await createOrgWithOwner();
    const before = await request<{ data: Project[] }>("GET", "/v1/projects", { key: owner.key });
    const sent = await send("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "never-created" },
      headers: { "X-D1-Bookmark": value },
    });
    expect(sent.status).toBe(400);
    expect(sent.body).toMatchObject({
      code: "bad_input",
      cause: [{ path: "header.x-d1-bookmark", message: expect.any(String) }],
    });
    const read = await send("GET", "/v1/projects", { key: owner.key, headers: { "X-D1-Bookmark": value } });
    expect(read.status).toBe(400);
    const after = await request<{ data: Project[] }>("GET", "/v1/projects", { key: owner.key });
    expect(after.body.data).toEqual(before.body.data);
    expect(await storedBookmark(owner)).toBeUndefined();
  });

  it("a request without a valid key is 401 whatever its bookmark header", async () => {
    const sent = await send("GET", "/v1/projects", { headers: { "X-D1-Bookmark": "garbage" } });
    expect(sent.status).toBe(401);
  });

  it("is checked, honoured and returned by the internal API, whose bookmark a key's read can start from", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const { bookmark: bm, header } = await write(owner, "for-internal");
    const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
    const refused = await send("POST", `/internal/v1/projects/${project.id}/environments`, {
      headers: { ...admin, "X-D1-Bookmark": "garbage" },
      body: { name: "never" },
    });
    expect(refused.status).toBe(400);
    const sent = await send("POST", `/internal/v1/projects/${project.id}/environments`, {
      headers: { ...admin, "X-D1-Bookmark": header as string },
      body: { name: "staging-from-engine" },
    });
    expect(sent.status).toBe(201);
    expect(requestStart(sent)).toBe("first-primary");
    expect(sent.bookmark && bm && sent.bookmark > bm).toBe(true);
    // Another key of the organization reads what the engine wrote, from the engine's bookmark.
    const reader = await createCaller(org, "admin");
    const read = await send("GET", `/v1/environments/${sent.body.id}/variables`, {
      key: reader.key,
      headers: { "X-D1-Bookmark": sent.header as string },
    });
    expect(read.status).toBe(200);
    expect(requestStart(read)).toBe(sent.bookmark);
  });
});

describe("every D1 access goes through a session", () => {
  it("requests: reads, writes, errors and the internal API never touch the bare binding", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    for (const sent of [
      await send("GET", `/v1/projects/${project.id}`, { key: owner.key }),
      await send("POST", "/v1/projects", { key: owner.key, body: { name: "another" } }),
      await send("GET", "/v1/projects/1111111111111111111111", { key: owner.key }),
      await send("POST", `/internal/v1/projects/${project.id}/environments`, {
        headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
        body: { name: "via-internal" },
      }),
      await send("DELETE", `/v1/projects/${project.id}`, { key: owner.key }),
    ]) {
      expect(sent.status, JSON.stringify(sent.body)).toBeLessThan(500);
      expect(sent.starts.length, `${sent.status} ${JSON.stringify(sent.body)}`).toBeGreaterThan(0);
    }
  });

  // A fan-out message with its event's bookmark starts from it: test/properties/webhooks/bookkeeping.test.ts.
  it("a queue message that carries no bookmark, and the cron, run on the primary", async () => {
    const recorded = recordingD1();
    const batch = createMessageBatch("deploy-platform-events", [
      {
        id: "msg-session-1",
        timestamp: new Date(),
        attempts: 1,
        body: { kind: "event.fanout", event_id: "0000000000000000000000" },
      },
    ]);
    const exec = createExecutionContext();
    await worker.queue(batch as MessageBatch<unknown>, recorded.env, exec);
    expect((await getQueueResult(batch, exec)).explicitAcks).toEqual(["msg-session-1"]);
    expect(recorded.starts).toEqual(["first-primary"]);

    const cron = recordingD1();
    await runCron(SWEEP_CRON, cron.env);
    expect(cron.starts.length).toBeGreaterThan(0);
    expect(new Set(cron.starts)).toEqual(new Set(["first-primary"]));
    expect(createServiceContext({ env, requestId: "t" }).session.start).toEqual({ mode: "first-primary" });
  });
});
