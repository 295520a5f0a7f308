import { createMiddleware } from "hono/factory";
import { withSession } from "../context";
import { D1_BOOKMARK_HEADER, isBookmark, laterBookmark, mayWrite, sessionStart } from "../db/session";
import { badInput, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { limiterOf } from "./rate-limit";

export { D1_BOOKMARK_HEADER };

/**
 * Opens the request's D1 session, once it is known where it must start (`sessionStart`): a
 * write on the primary; a read from the later of the caller's key's last write bookmark (which
 * its limiter object handed back with the rate-limit decision, `keyBookmark`) and the
 * `X-D1-Bookmark` header, or on the nearest replica when there is neither. Every service of
 * the request then reads through that session.
 *
 * Read-your-writes per key: after a request that writes, the session's bookmark (now at
 * least as fresh as its writes) is stored in the key's limiter object before the response
 * leaves (one more call, on writes only, and only when it moved past the stored one), so the
 * key's next read, from any isolate or region, starts from it. Every response that touched D1
 * (or was given a bookmark) carries the latest bookmark in `X-D1-Bookmark`, which another
 * key, or another system, may send back to read at least that fresh.
 *
 * A malformed header is `400 bad_input`; it is checked after authentication and the rate
 * limit, like every other part of the request.
 */
export const d1Session = createMiddleware<AppEnv>(async (c, next) => {
  const presented = c.req.header(D1_BOOKMARK_HEADER);
  if (presented !== undefined && !isBookmark(presented)) {
    throw badInput(`The ${D1_BOOKMARK_HEADER} header is not a D1 bookmark.`, [
      {
        path: `header.${D1_BOOKMARK_HEADER.toLowerCase()}`,
        message:
          "Expected a bookmark as returned in X-D1-Bookmark (e.g. 0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b).",
      },
    ]);
  }
  const ctx = c.get("ctx");
  const keyBookmark = c.get("keyBookmark");
  const session = ctx.openSession(sessionStart(c.req.method, keyBookmark, presented));
  c.set("ctx", withSession(ctx, session));
  await next();

  // A write's session started on the primary, so its bookmark is one D1 issued; a header
  // bookmark is never stored for the key (a made-up one would hold back the key's reads).
  let own = session.bookmark();
  const identity = ctx.identity;
  if (identity && mayWrite(c.req.method) && own && (!keyBookmark || own > keyBookmark)) {
    try {
      own = await limiterOf(c, `key:${identity.keyId}`).recordBookmark(own);
    } catch (err) {
      // Like the rate limit, fail open: the write is committed; only this key's next read
      // may start on a replica that has not caught up with it yet.
      ctx.log.error("could not store the key's D1 bookmark", { error: loggableError(err) });
    }
  }
  const latest = laterBookmark(own, presented);
  if (latest) c.res.headers.set(D1_BOOKMARK_HEADER, latest);
});
