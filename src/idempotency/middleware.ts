/**
 * Idempotency-Key (API_CONTRACT §11), around the request: acts on what the claim came to
 * (./claim.ts) and, once the request has run, stores its answer or releases the key: one more
 * call to the same limiter object, paid only by requests that carry the header. It sits right
 * after the rate limit that claimed the key, outside the scope check, the body guard and the etag
 * middleware, so the answer it stores is the one the client got (the route's own 400s and the
 * ETag included), and a replay executes nothing, opens no D1 session and writes no audit entry.
 *
 * A request refused by a later check of its form before it reaches its route (the key's scope, a
 * malformed `If-Match` or `X-D1-Bookmark`, the body guard's content type, charset, JSON, depth
 * and surrogates: §15, §17 "before anything executes") releases the key it claimed, as a 5xx
 * does: once the header or body is mended, a retry with the same key runs. What the route answers
 * (its own validation's 400 included) is stored, but a 401, 408 or 429 (`REFUSED`). `routeBegins`, the
 * last /v1 middleware, marks the line.
 *
 * A write runs with its key in its context (handed over as `executingKey`, which the route's
 * context carries as `idempotency`), so that its audit entry commits the key with the
 * change (./executed.ts): a claim whose predecessor's lease lapsed, or a write that meets its
 * committed key, answers what the committed execution did and never executes again.
 */
import type { Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { ExecutingKey } from "../context";
import { bookmarkHeader, bookmarkIn } from "../crypto/bookmarks";
import { D1_BOOKMARK_HEADER, laterBookmark } from "../db/session";
import { ApiError, badInput, isIdempotencyKeyTaken, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import type { RouteLookup } from "../http/operations";
import { keyBookmarkIn } from "../rate-limit/bookmark";
import { IDEMPOTENCY_HEADER, type IdempotencyState, KEY_PATTERN, WRITE_METHODS } from "./claim";
import {
  type ExecutedWrite,
  findExecuted,
  forgetKey,
  isForgotten,
  rebuiltAnswer,
  releaseKey,
} from "./executed";
import type { Settlement, StoredAnswer } from "./store";

/**
 * The headers of an answer that a replay repeats (API_CONTRACT §11, and `cache-control`), and the
 * D1 bookmark the write saw, which a replay answers unless the key has a later one.
 */
const REPLAYED_HEADERS = [
  "content-type",
  "etag",
  "location",
  "content-location",
  "cache-control",
  "x-d1-bookmark",
];

/**
 * A refusal of the request's credential or rate (§11: "requests refused before they execute (401,
 * 429) neither use nor store a key"): released, never stored, even when the route answers it. The
 * token exchange refuses its token in its route (src/middleware/rate-limit.ts `limitKeyless`), so
 * a mended request (the issuer back, a clock corrected) still runs under the same key; a create
 * whose calling key was revoked meanwhile (`callerKeyGone`) committed nothing. A `408` executed
 * nothing either (a body that never arrived whole, a write a move's fence refused: API_CONTRACT
 * §32), and the same request sent again must run.
 */
const REFUSED = new Set([401, 408, 429]);

/** Fetches a record (a GET of `path`) for the replay of an answer stored by reference. */
type Reread = (c: Context<AppEnv>, path: string) => Promise<Response> | Response;

const keyIssue = (message: string) => [{ path: "header.idempotency-key", message }];

const mismatch = () =>
  badInput(
    "This Idempotency-Key was used with another request (method, path, query or body).",
    keyIssue("Already used for a different request; use a new key."),
  );

/**
 * Acts on the claim: replays a stored answer, refuses a mismatch (400) or a duplicate in flight
 * (409, Retry-After: 1), or runs the request and settles the key. An answer stored by reference
 * is re-read as a GET of its record through `app`, with the same key; `routeMeta` says what an
 * operation answers, for an execution whose answer was lost.
 */
export function idempotency(app: Pick<Hono<AppEnv>, "request">, routeMeta: RouteLookup) {
  const reread: Reread = (c, path) =>
    app.request(
      path,
      { headers: { "x-api-key": c.req.header("x-api-key") ?? "", accept: "application/json" } },
      c.env,
      c.executionCtx,
    );
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!WRITE_METHODS.has(c.req.method)) return next();
    const key = c.req.header(IDEMPOTENCY_HEADER);
    if (key === undefined) return next();
    if (!KEY_PATTERN.test(key)) {
      throw badInput(
        "Idempotency-Key must be 1–255 characters from 0x21–0x7E.",
        keyIssue("1–255 printable ASCII characters, no spaces."),
      );
    }
    const state = c.get("idempotency");
    // No claim was asked for: the body could not be read, and the body guard refuses it next.
    if (!state) return next();
    const { outcome } = state;
    if (!outcome) {
      // Without the limiter nothing can promise a single execution: refuse rather than risk a
      // second one. Nothing ran, so a retry is safe.
      throw new ApiError("internal", "Idempotency keys are unavailable right now; retry shortly.");
    }
    if (outcome.state === "mismatch") throw mismatch();
    if (outcome.state === "in_flight") {
      throw new ApiError(
        "conflict",
        "A request with this Idempotency-Key is still executing; retry after Retry-After seconds.",
        keyIssue("In use by a request that has not finished."),
        { "Retry-After": "1" },
      );
    }
    if (outcome.state === "replay") {
      c.res = await replay(c, outcome.answer, reread);
      return;
    }
    let answer: Settlement = null;
    try {
      // The claim before this one never settled: its request may have committed, then died.
      const committed = outcome.lapsed ? await committedExecution(c, state) : undefined;
      const executing: ExecutingKey = { ...state.claim, entryIds: [] };
      if (!committed) {
        c.set("executingKey", executing);
        await next();
      }
      if (committed || isIdempotencyKeyTaken(c.error)) {
        // Nothing ran twice: answer what the execution that holds the key did.
        const executed = committed ?? (await committedExecution(c, state));
        if (!executed) throw releasedMeanwhile();
        if (executed.fingerprint !== state.claim.fingerprint) {
          // Another request holds the key: the claim lapses again, so that one is still answered.
          answer = "lapsed";
          throw mismatch();
        }
        const rebuilt = rebuiltAnswer(routeMeta(c), executed, new URL(c.req.url).pathname);
        answer = rebuilt;
        c.res = await replay(c, rebuilt, reread);
      } else if (c.res.status >= 500) {
        await releaseKey(c.get("ctx"), executing).catch((err: unknown) => {
          // The key stays taken: a retry is answered as executed, never executed twice.
          c.get("ctx").log.error("idempotency release failed", { error: loggableError(err) });
        });
      } else if (state.routeBegan && !REFUSED.has(c.res.status)) {
        answer = await toStoredAnswer(c);
      }
    } finally {
      // A 5xx, a refusal before the route ran, or a failure before any answer changed nothing:
      // release the key for a retry.
      await state.settle(answer).catch((err: unknown) => {
        // The claim's lease ends it within a minute; until then a retry answers 409.
        c.get("ctx").log.error("idempotency settle failed", { error: loggableError(err) });
      });
    }
  });
}

/**
 * The execution that committed this request's key (./executed.ts), if any (it may be another
 * request's: another fingerprint). One older than 24 h is forgotten here, and is none.
 */
async function committedExecution(
  c: Context<AppEnv>,
  state: IdempotencyState,
): Promise<ExecutedWrite | undefined> {
  const ctx = c.get("ctx");
  const keyId = ctx.identity?.keyId;
  if (!keyId) return undefined;
  const executed = await findExecuted(ctx, keyId, state.claim.key);
  if (!executed) return undefined;
  if (isForgotten(executed)) {
    await forgetKey(ctx, executed.entryId);
    return undefined;
  }
  return executed;
}

/** A write met its key, whose earlier use was forgotten (24 h old) meanwhile: a retry runs it. */
const releasedMeanwhile = () =>
  new ApiError(
    "conflict",
    "This Idempotency-Key's earlier use has just expired; retry after Retry-After seconds to execute this request.",
    keyIssue("Expired while this request ran."),
    { "Retry-After": "1" },
  );

/** The last /v1 middleware: the request has passed every check of its form and reaches its route. */
export const routeBegins = createMiddleware<AppEnv>(async (c, next) => {
  const state = c.get("idempotency");
  if (state) state.routeBegan = true;
  await next();
});

async function toStoredAnswer(c: Context<AppEnv>): Promise<StoredAnswer> {
  const res = c.res;
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const body = await res.clone().text();
  if (body === "") return { status: res.status, headers, body: null, ref: null };
  // The record it carried (its `location`, `content-location`, or the path of the PUT/PATCH):
  // what the limiter keeps instead of a large answer once its budget is spent.
  const ref =
    headers.location ??
    headers["content-location"] ??
    (c.req.method === "PUT" || c.req.method === "PATCH" ? new URL(c.req.url).pathname : null);
  return { status: res.status, headers, body, ref };
}

/**
 * The stored answer, with `Idempotent-Replayed: true` and, as `X-D1-Bookmark`, the later of the
 * bookmark the write saw (stored with its answer) and the key's latest write bookmark (which its
 * limiter keeps for a while after its last write), so a client that lost the first answer still
 * has one, at least as fresh as the write, to hand to another key.
 */
async function replay(c: Context<AppEnv>, answer: StoredAnswer, reread: Reread): Promise<Response> {
  const headers = new Headers(answer.headers);
  let body = answer.body;
  let status = answer.status;
  const { database, config } = c.get("ctx");
  // The stored answer's header was signed when it was made (an answer stored before bookmarks were
  // signed has none that verifies, and the key's bookmark stands in).
  const bookmarkOf = async (response: Headers) => {
    const value = response.get(D1_BOOKMARK_HEADER);
    return value ? await bookmarkIn(config.variableKeys, value, database).catch(() => null) : null;
  };
  let bookmark = laterBookmark(await bookmarkOf(headers), keyBookmarkIn(c.get("keyBookmark"), database));
  if (answer.ref) {
    // The record as it is now: its current body and ETag. If it is gone, that answer instead.
    const current = await reread(c, answer.ref);
    body = await current.text();
    const etag = current.headers.get("etag");
    if (etag) headers.set("etag", etag);
    // The re-read started from the key's bookmark: what it saw is at least as fresh.
    bookmark = laterBookmark(await bookmarkOf(current.headers), bookmark);
    if (current.status !== 200) {
      status = current.status;
      headers.delete("etag");
      headers.set("content-type", current.headers.get("content-type") ?? "application/json");
    }
  }
  headers.set("Idempotent-Replayed", "true");
  const signed = bookmark
    ? await bookmarkHeader(config.variableKeys, database, bookmark).catch(() => null)
    : null;
  if (signed) headers.set(D1_BOOKMARK_HEADER, signed);
  else headers.delete(D1_BOOKMARK_HEADER);
  return new Response(status === 204 || status === 304 ? null : body, { status, headers });
}
