/**
 * The service context: everything a service may use, built once per request (and once per
 * queue message or cron run) by `createServiceContext`, so services take `(ctx, input)` and
 * never see Hono or the Worker's `env` (Unkey's `c.get("services")`, openstatus's
 * `ServiceContext`).
 *
 * This is the one place that turns bindings into handles. What a later feature needs on every
 * request goes here once: the D1 session a request reads through is chosen in `openDb`, an
 * identity's scopes ride on `identity`, and a writer that must join a service's `db.batch`
 * (an audit entry) is a field of this type built from `db`.
 */
import type { VariableKeySecrets } from "./crypto/variables";
import { createDb, type Db } from "./db/client";
import type { OrgRole } from "./db/schema";
import { loggableError } from "./http/errors";
import type { EtagList } from "./http/etag";
import { createLogger, type Logger } from "./lib/log";
import type { QueueMessage } from "./schemas/queue-messages";

/** Who is calling: resolved from the API key by the auth middleware. */
export type Identity = {
  orgId: string;
  accountId: string;
  orgRole: OrgRole;
  keyId: string;
};

/** Settings read from the environment, parsed once per context. */
export type Config = {
  /** ALLOW_INSECURE_WEBHOOKS: http:// and private hosts as webhook URLs (local development only). */
  allowInsecureWebhooks: boolean;
  /** VARIABLES_KEY and, while rotating, VARIABLES_KEY_PREVIOUS. */
  variableKeys: VariableKeySecrets;
};

/** The EVENTS queue, as producers see it. */
export type EventsPort = {
  /**
   * Hands a committed event to the queue without holding up the caller (`waitUntil`). A failed
   * send is logged and left to the stale-event sweep: the event is already durable in D1.
   */
  publishAfterCommit(eventId: string): void;
  /** Sends messages now, 100 per `sendBatch` (the queue's limit); a failure throws. */
  send(messages: readonly QueueMessage[]): Promise<void>;
};

export type ServiceContext = {
  db: Db;
  /** The request's id (`x-request-id`), or the queue message's / cron run's. */
  requestId: string;
  /** Carries `request_id` on every entry. */
  log: Logger;
  config: Config;
  events: EventsPort;
  /** Keeps work alive after the response (or the consumer's return). */
  waitUntil(work: Promise<unknown>): void;
  /** Set for an authenticated /v1 request; absent for the internal API, the queue and the cron. */
  identity?: Identity;
  /**
   * The request's `If-Match` (API_CONTRACT §12), set by the etag middleware: a write of a record
   * checks it in the same statement as the write (src/services/preconditions.ts).
   */
  ifMatch?: EtagList;
};

/** The context of a request made with an API key: services acting for a caller take this. */
export type CallerContext = ServiceContext & { identity: Identity };

export type ContextSource = {
  env: Env;
  requestId: string;
  /** The runtime's `waitUntil`; absent when a test calls an entry point without one. */
  waitUntil?: (work: Promise<unknown>) => void;
  identity?: Identity;
};

export function parseConfig(env: Env): Config {
  const withRotation = env as Env & { VARIABLES_KEY_PREVIOUS?: string };
  return {
    allowInsecureWebhooks: env.ALLOW_INSECURE_WEBHOOKS === "true",
    variableKeys: { current: withRotation.VARIABLES_KEY, previous: withRotation.VARIABLES_KEY_PREVIOUS },
  };
}

/** The database handle of one request, message or cron run (the one place a D1 binding becomes a `Db`). */
export function openDb(env: Env): Db {
  return createDb(env.DB);
}

/** Queues accept at most 100 messages per sendBatch. */
const SEND_BATCH_LIMIT = 100;

function eventsPort(queue: Queue, log: Logger, waitUntil: (work: Promise<unknown>) => void): EventsPort {
  const send = async (messages: readonly QueueMessage[]) => {
    if (messages.length === 1 && messages[0]) {
      await queue.send(messages[0], { contentType: "json" });
      return;
    }
    for (let i = 0; i < messages.length; i += SEND_BATCH_LIMIT) {
      const chunk = messages.slice(i, i + SEND_BATCH_LIMIT);
      await queue.sendBatch(chunk.map((body) => ({ body, contentType: "json" as const })));
    }
  };
  return {
    send,
    publishAfterCommit: (eventId) =>
      waitUntil(
        send([{ kind: "event.fanout", event_id: eventId }]).catch((err: unknown) =>
          log.error("event publish failed; left to the sweep", {
            event_id: eventId,
            error: loggableError(err),
          }),
        ),
      ),
  };
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
  const ctx: ServiceContext = {
    db: openDb(source.env),
    requestId: source.requestId,
    log,
    config: parseConfig(source.env),
    events: eventsPort(source.env.EVENTS, log, waitUntil),
    waitUntil,
  };
  if (source.identity) ctx.identity = source.identity;
  return ctx;
}

/** The same context acting for an authenticated caller. */
export function withIdentity(ctx: ServiceContext, identity: Identity): CallerContext {
  return { ...ctx, identity };
}
