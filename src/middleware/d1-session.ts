/**
 * The request's D1 session (src/db/session.ts), opened by the context middleware once it is known
 * where it must start (`sessionStart`): a write on the primary; a read from the later of the
 * caller's key's last write bookmark (which its limiter object handed back with the rate-limit
 * decision, `keyBookmark`) and the `X-D1-Bookmark` header, or on the nearest replica when there
 * is neither. Every service of the request then reads through that session.
 *
 * Read-your-writes per key: after a request that writes, the session's bookmark (now at least as
 * fresh as its writes) is stored in the limiter object of the key's family (API_CONTRACT §28)
 * before the response leaves (one more call, on writes only, and only when it moved past the
 * stored one), so the next read of any key of the family, from any isolate or region, starts from
 * it. Every response that touched D1 (or was given a bookmark)
 * carries the latest bookmark in `X-D1-Bookmark`, with the database it is of (src/db/session.ts),
 * which another key, or another system, may send back to read at least that fresh.
 */
import type { Context } from "hono";
import type { ServiceContext } from "../context";
import {
  bookmarkHeader,
  bookmarkIn,
  D1_BOOKMARK_HEADER,
  type DbSession,
  laterBookmark,
  mayWrite,
  sessionStart,
} from "../db/session";
import { badInput, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { limiterOf } from "./rate-limit";

/**
 * Opens the request's session. A malformed `X-D1-Bookmark` is `400 bad_input`, checked after
 * authentication and the rate limit, like every other part of the request.
 */
export function openRequestSession(c: Context<AppEnv>, ctx: ServiceContext): DbSession {
  return ctx.openSession(sessionStart(c.req.method, c.get("keyBookmark"), presentedBookmark(c, ctx)));
}

/**
 * The `X-D1-Bookmark` the request carries, as a bookmark of the request's database: null when it
 * has none or names another database (whose bookmark says nothing of this one).
 */
function presentedBookmark(c: Context<AppEnv>, ctx: ServiceContext): string | null {
  const presented = c.req.header(D1_BOOKMARK_HEADER);
  if (presented === undefined) return null;
  const bookmark = bookmarkIn(presented, ctx.database);
  if (bookmark === undefined) {
    throw badInput(`The ${D1_BOOKMARK_HEADER} header is not a D1 bookmark.`, [
      {
        path: `header.${D1_BOOKMARK_HEADER.toLowerCase()}`,
        message:
          "Expected a bookmark as returned in X-D1-Bookmark (e.g. DB:0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b).",
      },
    ]);
  }
  return bookmark;
}

/** Once the route has answered: the write's bookmark for the key, and `X-D1-Bookmark` on the answer. */
export async function passOnBookmark(c: Context<AppEnv>, ctx: ServiceContext): Promise<void> {
  const { session, identity, log } = ctx;
  const presented = presentedBookmark(c, ctx);
  const keyBookmark = c.get("keyBookmark");
  // A write's session started on the primary, so its bookmark is one D1 issued; a header
  // bookmark is never stored for the key (a made-up one would hold back the key's reads).
  let own = session.bookmark();
  if (identity && mayWrite(c.req.method) && own && (!keyBookmark || own > keyBookmark)) {
    try {
      own = await limiterOf(c, identity.limiter).recordBookmark(own);
    } catch (err) {
      // Like the rate limit, fail open: the write is committed; only this key's next read
      // may start on a replica that has not caught up with it yet.
      log.error("could not store the key's D1 bookmark", { error: loggableError(err) });
    }
  }
  const latest = laterBookmark(own, presented);
  if (latest) c.res.headers.set(D1_BOOKMARK_HEADER, bookmarkHeader(ctx.database, latest));
}
