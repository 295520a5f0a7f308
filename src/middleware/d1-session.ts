/**
 * The request's D1 session (src/db/session.ts), opened by the context middleware once it is known
 * where it must start (`sessionStart`): a write on the primary; a read from the later of the
 * caller's key's last write bookmark (which its limiter object handed back with the rate-limit
 * decision, `keyBookmark`) and the verified `X-D1-Bookmark` header, or on the nearest replica when
 * there is neither. Every service of the request then reads through that session.
 *
 * Read-your-writes per key: after a request that writes, the session's bookmark (now at least as
 * fresh as its writes) is stored in the limiter object of the key's family (API_CONTRACT §28)
 * before the response leaves (one more call, on writes only, and only when it moved past the
 * stored one), so the next read of any key of the family, from any isolate or region, starts from
 * it. Every response that touched D1 (or was given a bookmark) carries the latest bookmark in
 * `X-D1-Bookmark`, with the database it is of (src/db/session.ts) and a MAC
 * (src/crypto/bookmarks.ts), which another key, or another system, may send back to read at least
 * that fresh. A header bookmark whose MAC does not verify is ignored: a made-up one from the future
 * would hold the read back, or send it to the primary.
 */
import type { Context } from "hono";
import type { ServiceContext } from "../context";
import { bookmarkHeader, bookmarkIn } from "../crypto/bookmarks";
import { D1_BOOKMARK_HEADER, type DbSession, laterBookmark, mayWrite, sessionStart } from "../db/session";
import { badInput, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { keyBookmarkIn } from "../rate-limit/bookmark";
import { limiterOf } from "./rate-limit";

/**
 * The `X-D1-Bookmark` the request carries, as a bookmark of the request's database the service
 * handed out: null when it has none, names another database, or its MAC does not verify (or
 * `VARIABLES_KEY` is unusable, which is logged). A malformed value is `400 bad_input`, checked
 * after authentication and the rate limit, like every other part of the request.
 */
export async function presentedBookmark(c: Context<AppEnv>, ctx: ServiceContext): Promise<string | null> {
  const presented = c.req.header(D1_BOOKMARK_HEADER);
  if (presented === undefined) return null;
  let bookmark: string | null | undefined;
  try {
    bookmark = await bookmarkIn(ctx.config.variableKeys, presented, ctx.database);
  } catch (err) {
    ctx.log.error("could not check an X-D1-Bookmark; it is ignored", { error: loggableError(err) });
    return null;
  }
  if (bookmark === undefined) {
    throw badInput(`The ${D1_BOOKMARK_HEADER} header is not a D1 bookmark.`, [
      {
        path: `header.${D1_BOOKMARK_HEADER.toLowerCase()}`,
        message:
          "Expected a bookmark as returned in X-D1-Bookmark (e.g. DB:0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b.<MAC>).",
      },
    ]);
  }
  return bookmark;
}

/** Opens the request's session, from `presented` (`presentedBookmark`) and the key's bookmark. */
export function openRequestSession(
  c: Context<AppEnv>,
  ctx: ServiceContext,
  presented: string | null,
): DbSession {
  return ctx.openSession(
    sessionStart(c.req.method, keyBookmarkIn(c.get("keyBookmark"), ctx.database), presented),
  );
}

/** Once the route has answered: the write's bookmark for the key, and `X-D1-Bookmark` on the answer. */
export async function passOnBookmark(
  c: Context<AppEnv>,
  ctx: ServiceContext,
  presented: string | null,
): Promise<void> {
  const { session, identity, log } = ctx;
  const keyBookmark = keyBookmarkIn(c.get("keyBookmark"), ctx.database);
  // A write's session started on the primary, so its bookmark is one D1 issued; a header
  // bookmark is never stored for the key (even a verified one orders no write of this key).
  // Stored with its database (src/rate-limit/bookmark.ts).
  let own = session.bookmark();
  if (identity && mayWrite(c.req.method) && own && (!keyBookmark || own > keyBookmark)) {
    try {
      const stored = await limiterOf(c, identity.limiter).recordBookmark(`${ctx.database}:${own}`);
      own = keyBookmarkIn(stored, ctx.database) ?? own;
    } catch (err) {
      // Like the rate limit, fail open: the write is committed; only this key's next read
      // may start on a replica that has not caught up with it yet.
      log.error("could not store the key's D1 bookmark", { error: loggableError(err) });
    }
  }
  const latest = laterBookmark(own, presented);
  if (!latest) return;
  try {
    c.res.headers.set(
      D1_BOOKMARK_HEADER,
      await bookmarkHeader(ctx.config.variableKeys, ctx.database, latest),
    );
  } catch (err) {
    // Without VARIABLES_KEY no bookmark can be vouched for: the answer goes without one.
    log.error("could not sign the answer's D1 bookmark", { error: loggableError(err) });
  }
}
