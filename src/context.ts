/**
 * The service context: everything a service may use, built once per request (and once per
 * queue message or cron run) by `createServiceContext`, so services take `(ctx, input)` and
 * never see Hono or the Worker's `env` (Unkey's `c.get("services")`, openstatus's
 * `ServiceContext`).
 *
 * A request's context is assembled by src/middleware/context.ts alone (the caller with
 * `withIdentity`, from authentication); the queue consumer and the cron build one per message and
 * run. This is the one place that turns bindings into handles. What a later feature needs on every
 * request goes here once: the D1 session a request reads through is opened here (`session`,
 * src/db/session.ts), a caller's scopes ride on `identity`, and a writer that must join a
 * service's `db.batch` (an audit entry) is a field of this type built from `db`.
 */
import { type Config, parseConfig } from "./config";
import type { Db } from "./db/client";
import { DIRECTORY, d1Of } from "./db/databases";
import type { OrgRole } from "./db/schema";
import { type DbSession, openSession, PRIMARY, type SessionStart } from "./db/session";
import { createLogger, type Logger } from "./lib/log";

/** Who is calling: resolved from the API key by the auth middleware. */
export type Identity = {
  orgId: string;
  accountId: string;
  orgRole: OrgRole;
  keyId: string;
  /** What the key may do (API_CONTRACT §15): `["*"]` or a list of scopes. */
  scopes: readonly string[];
  /** The only projects the key may see, or null for every project its account may see. */
  projectIds: readonly string[] | null;
  /** The binding of its organization's database (src/db/databases.ts). */
  database: string;
  /**
   * The limiter object its requests count in (`key:<root key id>` or `trust:<trust id>`, API_CONTRACT
   * §28): the window its family shares, and what that object keeps for the key (its Idempotency-Keys,
   * its last use, the family's latest D1 bookmark).
   */
  limiter: string;
};

/**
 * The key and its account's membership looked up again, as authentication does (API_CONTRACT §5):
 * the identity the key acts as now, or null once it no longer does (revoked, expired, its account
 * no longer a member of the organization). Built at authentication
 * (src/services/api-keys/authenticate.ts) over the key's hash, so nothing after authentication
 * holds the key itself; it reads the isolate's 30 s cache of keys like any request does. A live
 * stream asks it before it sends and after its deployment changes, at most every 30 s
 * (src/services/deployments/follow.ts). `fresh`: read again from the primaries, past the cache
 * (the organization may have moved to another database: src/middleware/context.ts).
 */
export type RecheckAccess = (options?: { fresh?: boolean }) => Promise<Identity | null>;

/** The caller an API key authenticates as: who it is, and how to ask again whether it still is. */
export type Caller = { identity: Identity; recheckAccess: RecheckAccess };

/** What the audit log records about the request (API_CONTRACT §14), set once the route is known. */
export type RequestInfo = {
  /** The matched route's operationId (`createProject`, `internal.createOrg`): an entry's `action`. */
  operationId: string | undefined;
  /** `cf-connecting-ip`, or null. */
  ip: string | null;
  userAgent: string | null;
};

export type ServiceContext = {
  /** The Drizzle handle over `session`: every query of the request, message or cron run. */
  db: Db;
  /**
   * The D1 session `db` runs on: where it started (`start.mode`, which tests assert, since the
   * local runtime has a single copy of the database) and its latest bookmark. Recording it
   * costs nothing: the session exists anyway.
   */
  session: DbSession;
  /**
   * The binding of the database `db` runs on (src/db/databases.ts): an /v1 request's is its key's
   * organization database, set with its identity; before that, and for the internal API's
   * organization-less paths, the directory.
   */
  database: string;
  /** Opens another session of the same database (a read that must see the primary, say), or of `database`. */
  openSession(start: SessionStart, database?: string): DbSession;
  /** The request's id (`x-request-id`), or the queue message's / cron run's. */
  requestId: string;
  /** Carries `request_id` on every entry. */
  log: Logger;
  config: Config;
  /** The EVENTS queue: what goes on it, and how, is src/services/events/queue.ts. */
  eventsQueue: Queue;
  /** Each deployment's feed (src/feed/): writes notify it, live streams and waits subscribe. */
  deploymentFeeds: Env["DEPLOYMENT_FEED"];
  /**
   * The limiter objects (src/rate-limit/limiter.ts): the middleware counts requests in them; a
   * service asks one only for what it keeps beside a window (a trust's exchanged tokens, §27).
   */
  limiters: Env["RATE_LIMITER"];
  /** One delivery lane per notification integration (src/delivery-lane/): services hand deliveries over through its client.ts. */
  deliveryLanes: Env["DELIVERY_LANES"];
  /** One gate object per environment: the wait timers of its waiting deployments (src/gate/). */
  environmentGates: Env["ENVIRONMENT_GATES"];
  /** One object per audit log stream: what sends its batches, in order (src/audit-stream/). */
  auditStreams: Env["AUDIT_STREAMS"];
  /** One object per move of an organization to another database (src/org-move/). */
  orgMoves: Env["ORG_MOVES"];
  /** Keeps work alive after the response (or the consumer's return). */
  waitUntil(work: Promise<unknown>): void;
  /** Set for an authenticated /v1 request; absent for the internal API, the queue and the cron. */
  identity?: Identity;
  /** Set with `identity`, from the same authentication. */
  recheckAccess?: RecheckAccess;
  /** Set for a request that matched a route (public or internal); absent for the queue and the cron. */
  request?: RequestInfo;
  /**
   * The request's `If-Match` (API_CONTRACT §12), its entity tags as src/http/etag.ts reads them:
   * a write of a record checks it in the same statement as the write (src/services/preconditions.ts).
   */
  ifMatch?: "*" | string[];
  /** Set for a /v1 write that claimed an Idempotency-Key and now executes under it. */
  idempotency?: ExecutingKey;
};

/**
 * A /v1 write running under its claimed Idempotency-Key (API_CONTRACT §11). Its audit entry
 * records the key (src/services/audit/entry.ts), so the key commits with the change it keyed,
 * or not at all (src/idempotency/executed.ts).
 */
export type ExecutingKey = {
  key: string;
  fingerprint: string;
  /** The ids of the entries this execution built (whether or not each was written). */
  entryIds: string[];
};

/** The context of a request made with an API key: services acting for a caller take this. */
export type CallerContext = ServiceContext & { identity: Identity; recheckAccess: RecheckAccess };

export type ContextSource = {
  env: Env;
  requestId: string;
  /** The database the context's session runs on (default: the directory). */
  database?: string;
  /** The runtime's `waitUntil`; absent when a test calls an entry point without one. */
  waitUntil?: (work: Promise<unknown>) => void;
  /**
   * Where the D1 session starts (src/db/session.ts). Default `first-primary`: a queue message
   * or a cron run acts on rows committed a moment before (the event a request just wrote),
   * which a replica may not have yet, and it writes.
   */
  session?: SessionStart;
};

/**
 * A D1 session of one request, message or cron run (the one place a D1 binding becomes a `Db`).
 * The binding is looked up at the first query: a request that never reaches D1 needs none, and
 * one whose database is not bound fails there (`DatabaseUnavailable`), and only that request.
 */
export function openDb(env: Env, start: SessionStart, database: string = DIRECTORY): DbSession {
  return openSession({ withSession: (from) => d1Of(env, database).withSession(from) }, start);
}

export function createServiceContext(source: ContextSource): ServiceContext {
  const log = createLogger({ request_id: source.requestId });
  // Without a runtime context (a test calling an entry point directly) the work still runs;
  // nothing keeps the isolate alive for it, which a test does not need.
  const waitUntil =
    source.waitUntil ??
    ((work: Promise<unknown>) => {
      work.catch(() => undefined);
    });
  const database = source.database ?? DIRECTORY;
  const session = openDb(source.env, source.session ?? PRIMARY, database);
  const ctx: ServiceContext = {
    db: session.db,
    session,
    database,
    openSession: (start, other = database) => openDb(source.env, start, other),
    requestId: source.requestId,
    log,
    config: parseConfig(source.env),
    eventsQueue: source.env.EVENTS,
    deploymentFeeds: source.env.DEPLOYMENT_FEED,
    limiters: source.env.RATE_LIMITER,
    deliveryLanes: source.env.DELIVERY_LANES,
    environmentGates: source.env.ENVIRONMENT_GATES,
    auditStreams: source.env.AUDIT_STREAMS,
    orgMoves: source.env.ORG_MOVES,
    waitUntil,
  };
  return ctx;
}

/** The same context on another D1 session (the request's, once its start is known). */
export function withSession<T extends ServiceContext>(ctx: T, session: DbSession): T {
  return { ...ctx, db: session.db, session };
}

/**
 * The same context on `database`: its session starts where the current one did, and every
 * session it opens later is of that database.
 */
export function inDatabase<T extends ServiceContext>(ctx: T, database: string): T {
  if (database === ctx.database) return ctx;
  const base = ctx.openSession;
  const session = base(ctx.session.start, database);
  return {
    ...ctx,
    db: session.db,
    session,
    database,
    openSession: (start, other = database) => base(start, other),
  };
}

/** The same context acting for an authenticated caller, on the caller's organization database. */
export function withIdentity(ctx: ServiceContext, { identity, recheckAccess }: Caller): CallerContext {
  return { ...inDatabase(ctx, identity.database), identity, recheckAccess };
}
