/**
 * The pieces of the API's request path that the ladder has no twin of, each run `n` times inside
 * one request (bench/pieces.mjs): the API's own functions, imported from src/, on the answers the
 * bench's reads give (a project; a page of 20 projects). A piece's cost is the request's wall time
 * over `n`: the loop dwarfs the request around it.
 */
import { DurableObject } from "cloudflare:workers";
import { compiledKeyset, encodeCursor, pageRequest, toPage } from "../../src/db/pagination";
import { projects } from "../../src/db/schema";
import { etagOf } from "../../src/http/etag";
import { ListQuerySchema } from "../../src/http/openapi";
import { sha256Hex } from "../../src/lib/hex";
import { newId } from "../../src/lib/ids";
import { rateLimitHeaders } from "../../src/middleware/rate-limit";
import type { AdmitRequest, AdmitResult } from "../../src/rate-limit/limiter";
import { readProject, toProjectRecord } from "../../src/services/project-records";

// 21 rows of `projects` as D1's `raw()` hands them to the API (LIMIT 21), in the table's column order.
const values = Array.from({ length: 21 }, (_, i) => [
  `QNtFcGHUC94WGWH3sAenU${String.fromCharCode(65 + i)}`,
  "SYW2UiBsK4xzrz3ag4QhuD",
  `bench project ${i}`,
  `bench project ${i}`,
  "A project of the bench",
  null,
  null,
  "J5uN41RsM6BfYptvyqftni",
  "connected",
  "2026-11-23T11:28:01.347Z",
  "2026-11-23T11:28:01.347Z",
]);
// The same rows as D1's `all()` hands them to the ladder's page rung: objects keyed by column.
const COLUMNS = [
  "id",
  "org_id",
  "name",
  "name_key",
  "description",
  "icon",
  "repo_id",
  "default_environment_id",
  "connection_status",
  "created_at",
  "updated_at",
];
const rowObjects = values.map((v) => Object.fromEntries(COLUMNS.map((column, i) => [column, v[i]])));
const page = pageRequest({ limit: 20, sort_by: "created_at" });
const listText = (rows: readonly (readonly unknown[])[] = values) =>
  JSON.stringify(
    toPage(
      rows.map((v) => readProject(v)),
      page,
      (r) => ({ createdAt: r.createdAt, id: r.id }),
      toProjectRecord,
    ),
  );
// The same values and rows as new strings each time, as D1 hands them over (its answer parsed).
const VALUES_JSON = JSON.stringify(values);
const ROWS_JSON = JSON.stringify(rowObjects);
const recordText = JSON.stringify(toProjectRecord(readProject(values[0] ?? [])));
const JSON_HEADERS = { "content-type": "application/json" };
const answer = (text: string) => new Response(text, { headers: JSON_HEADERS });
const KEY = "dpk_AmvKz4tahimSpQseQWx0Y6bA8X5USkbOWvmhxRLkcRc";
const REQUEST_HEADERS = {
  "x-api-key": KEY,
  "user-agent": "autocannon/9",
  "cf-connecting-ip": "127.0.0.1",
  accept: "application/json",
};
const DECISION = { allowed: true, limit: 100, remaining: 57, reset: 41 };

/**
 * The RPC pieces' object: no storage, so a piece measures the call, not SQLite. `hit` has the
 * shape of the ladder's counter call, `admit` the shape of the API limiter's (src/rate-limit/limiter.ts).
 */
export class Probe extends DurableObject {
  private n = 0;
  hit(): number {
    return ++this.n;
  }
  admit(request: AdmitRequest): AdmitResult {
    this.n++;
    return {
      decision: { allowed: true, limit: request.limit, remaining: 57, reset: 41 },
      bookmark: BOOKMARK,
    };
  }
  /** The same answer, flat: positional arguments, an array of primitives back. */
  admitFlat(
    _policy: string,
    limit: number,
    _windowSeconds: number,
  ): [boolean, number, number, number, string] {
    this.n++;
    return [true, limit, 57, 41, BOOKMARK];
  }
}

const BOOKMARK = "00000000-00000024-00000000-00000000000000000000000000000000";
type Env = { PROBE: DurableObjectNamespace<Probe>; DB: D1Database };
let env: Env;
const probe = () => env.PROBE.get(env.PROBE.idFromName(KEY));

const PAGE_SQL = `SELECT ${COLUMNS.join(", ")} FROM rows ORDER BY created_at, id LIMIT 21`;
let seeded = false;
let pageOnce: D1PreparedStatement | undefined;
/** The statement pieces' table: the 21 rows above, written once per database. */
async function seed(db: D1Database) {
  if (seeded) return;
  // Not a promise shared between requests: workerd ties a promise's I/O to the request that made it.
  await db.batch([
    db.prepare(`CREATE TABLE IF NOT EXISTS rows (${COLUMNS.join(", ")}, PRIMARY KEY (id))`),
    ...values.map((v) =>
      db.prepare(`INSERT OR IGNORE INTO rows VALUES (${COLUMNS.map(() => "?").join(", ")})`).bind(...v),
    ),
  ]);
  seeded = true;
}

/** Each piece once; what it returns keeps its work from being optimized away. */
const pieces: Record<string, () => unknown> = {
  // What every answer costs, the ladder's too: the ratios are to this.
  response: () => answer(recordText),
  // The ETag of a project's answer and of a page's, the way the etag middleware made it until
  // this piece was measured (a clone of the answer, read back, digested)…
  "etag, answer read back: a record": async () => {
    const res = answer(recordText);
    return [res, await etagOf(await res.clone().arrayBuffer())];
  },
  "etag, answer read back: a page": async () => {
    const res = answer(listText());
    return [res, await etagOf(await res.clone().arrayBuffer(), true)];
  },
  // …without the clone (the lever tried before: no better, the read is the cost)…
  "etag, answer read once: a record": async () => {
    const bytes = await answer(recordText).arrayBuffer();
    return [new Response(bytes, { headers: JSON_HEADERS }), await etagOf(bytes)];
  },
  // …and as it does now: the digest of the JSON text `c.json` made (src/middleware/etag.ts).
  "etag from the JSON text: a record": async () => [answer(recordText), await etagOf(recordText)],
  "etag from the JSON text: a page": async () => {
    const text = listText();
    return [answer(text), await etagOf(text, true)];
  },
  // Authentication's digest of the presented key (src/services/api-keys.ts).
  "key digest": () => sha256Hex(KEY),
  // The request id of every request (src/middleware/request-id.ts).
  "request id": () => newId(),
  // The limiter's five headers, set on an answer (src/middleware/rate-limit.ts).
  "rate-limit headers on an answer": () => {
    const res = answer(recordText);
    for (const [name, value] of Object.entries(rateLimitHeaders("default", DECISION)))
      res.headers.set(name, value);
    return res;
  },
  // A page of 20 projects, from D1's values to its JSON text (src/services/projects.ts)…
  "page: values to rows": () => values.map((v) => readProject(v)),
  "page: values to JSON text": () => listText(),
  // …and on new strings each time (D1's answer parsed), beside the parse alone and the ladder's
  // page rung on new rows: do the constant strings above flatter the work?
  "fresh values: parsed": () => JSON.parse(VALUES_JSON),
  "fresh values: parsed, to JSON text": () => listText(JSON.parse(VALUES_JSON)),
  "fresh rows: parsed": () => JSON.parse(ROWS_JSON),
  "fresh rows: parsed, the ladder page's JSON text": () =>
    JSON.stringify({ data: (JSON.parse(ROWS_JSON) as unknown[]).slice(0, 20), has_more: true }),
  // What a list does per request besides its rows: its keyset (the compiled statement's variant;
  // src/db/pagination.ts), the next page's cursor, the validation of its query (zod, as the
  // route's validator runs it)…
  "list: keyset of a compiled page": () =>
    compiledKeyset({ createdAt: projects.createdAt, id: projects.id }, page).variant,
  "list: next page's cursor": () =>
    encodeCursor("desc", "", "2026-11-23T11:28:01.347Z", "QNtFcGHUC94WGWH3sAenUA"),
  "list: query validated": () => ListQuerySchema.safeParseAsync({ limit: "20" }),
  // …and six header reads of a request (the middleware read about that many).
  "request: made": () => new Request("http://api.test/v1/projects?limit=20", { headers: REQUEST_HEADERS }),
  "request: made, six header reads": () => {
    const request = new Request("http://api.test/v1/projects?limit=20", { headers: REQUEST_HEADERS });
    return [
      request.headers.get("x-request-id"),
      request.headers.get("x-api-key"),
      request.headers.get("idempotency-key"),
      request.headers.get("cf-connecting-ip"),
      request.headers.get("user-agent"),
      request.headers.get("x-d1-bookmark"),
    ];
  },
  // The call to a key's object: as the ladder's rung makes it, and as the API's limiter call is
  // shaped (an object each way; src/middleware/rate-limit.ts).
  "object call: no argument, a number back (the rung's)": () => probe().hit(),
  "object call: the limiter's request and answer": () =>
    probe().admit({ policy: "default", limit: 100, windowSeconds: 60 }),
  // …and the same flat (a shape not taken: see bench/README, "The pieces").
  "object call: the limiter's, flat": () => probe().admitFlat("default", 100, 60),
  // A page of 21 rows from local D1: as the ladder's page rung reads it (a statement prepared
  // once, rows as objects), and as the API does (prepared per request on a D1 session, rows as
  // arrays; src/db/compiled.ts).
  "D1 page: all(), prepared once (the rung's)": () => pageOnce?.all(),
  "D1 page: raw(), in a session (the API's)": () =>
    env.DB.withSession("first-unconstrained").prepare(PAGE_SQL).raw(),
  // …and what the ladder's page rung does with its rows.
  "ladder page: rows to JSON text": () => JSON.stringify({ data: rowObjects.slice(0, 20), has_more: true }),
};

export default {
  async fetch(request: Request, bindings: Env): Promise<Response> {
    env = bindings;
    await seed(env.DB);
    pageOnce ??= env.DB.prepare(PAGE_SQL);
    const url = new URL(request.url);
    const piece = pieces[decodeURIComponent(url.pathname.slice(1))];
    if (!piece) return Response.json({ pieces: Object.keys(pieces) });
    const n = Number(url.searchParams.get("n") ?? 1000);
    let last: unknown;
    for (let i = 0; i < n; i++) last = await piece();
    return Response.json({ n, kept: last !== undefined });
  },
} satisfies ExportedHandler<Env>;
