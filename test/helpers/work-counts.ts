/**
 * The work one request does, counted on the real bindings (test/properties/query-count/): D1
 * statements and round trips (a batch is one round trip) and Durable Object calls. Counting
 * wrappers delegate every call to the real D1 database, limiter, queue and feed objects.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../../src/app";
import type { FeedUpdate } from "../../src/feed/protocol";
import type { AdmitRequest, SettleRequest } from "../../src/rate-limit/limiter";
import type { StreamLeaseRequest } from "../../src/rate-limit/stream-leases";
import { internalOk, request } from "./api";
import { recordingD1 } from "./d1-trips";
import { type Caller, createDeployment, createProject, createStack } from "./factories";

export type Counts = {
  d1Statements: number;
  d1RoundTrips: number;
  limiterCalls: number;
  /** Where each D1 session the request opened started (`withSession`'s argument, modes only). */
  sessions: string[];
  /** Messages handed to the EVENTS queue (counted only when there are some). */
  queueMessages?: number;
  /** Calls to deployments' feed objects: notifications and subscriptions (counted only when there are some). */
  feedCalls?: number;
  /** A live stream's renewals and release of its place among its key family's (§33; counted only when there are some). */
  placeCalls?: { renew: number; release: number };
};

/** The real bindings, D1 recorded (../helpers/d1-trips.ts), the limiter, queue and feed calls counted. */
export function countingBindings(counts: Counts): Env {
  const d1 = recordingD1(env, {
    session: (start) => counts.sessions.push(start.startsWith("first-") ? start : "bookmark"),
    trip: (trip) => {
      counts.d1RoundTrips++;
      counts.d1Statements += trip.sql.length;
    },
  });
  const limiter = {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = env.RATE_LIMITER.get(id);
      return {
        admit: (request: AdmitRequest) => {
          counts.limiterCalls++;
          return stub.admit(request);
        },
        recordBookmark: (bookmark: string) => {
          counts.limiterCalls++;
          return stub.recordBookmark(bookmark);
        },
        settle: (request: SettleRequest) => {
          counts.limiterCalls++;
          return stub.settle(request);
        },
        renewStream: (request: StreamLeaseRequest) => {
          counts.placeCalls ??= { renew: 0, release: 0 };
          counts.placeCalls.renew++;
          return stub.renewStream(request);
        },
        releaseStream: (id: string) => {
          counts.placeCalls ??= { renew: 0, release: 0 };
          counts.placeCalls.release++;
          return stub.releaseStream(id);
        },
      };
    },
  };
  const sent = (n: number) => {
    counts.queueMessages = (counts.queueMessages ?? 0) + n;
  };
  const events = {
    send: (body: unknown, options?: QueueSendOptions) => {
      sent(1);
      return env.EVENTS.send(body, options);
    },
    sendBatch: (messages: Iterable<MessageSendRequest>, options?: QueueSendBatchOptions) => {
      const list = [...messages];
      sent(list.length);
      return env.EVENTS.sendBatch(list, options);
    },
  };
  const called = () => {
    counts.feedCalls = (counts.feedCalls ?? 0) + 1;
  };
  const feeds = {
    idFromName: (name: string) => env.DEPLOYMENT_FEED.idFromName(name),
    get: (id: DurableObjectId) => {
      const stub = env.DEPLOYMENT_FEED.get(id);
      return {
        notify: (update: FeedUpdate) => {
          called();
          return stub.notify(update);
        },
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          called();
          return stub.fetch(input, init);
        },
      };
    },
  };
  return {
    ...d1.env,
    DEPLOYMENT_FEED: feeds as unknown as Env["DEPLOYMENT_FEED"],
    EVENTS: events as unknown as Queue,
    RATE_LIMITER: limiter as unknown as Env["RATE_LIMITER"],
  };
}

export async function measure(
  path: string,
  key?: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Counts & { status: number }> {
  const counts: Counts = { d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0, sessions: [] };
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { accept: "application/json", ...init.headers };
  if (key) headers["x-api-key"] = key;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, { method: init.method ?? "GET", headers, body: init.body }),
    countingBindings(counts),
    ctx,
  );
  await res.arrayBuffer();
  await waitOnExecutionContext(ctx); // includes the key's last_used_at write, when it makes one
  return { status: res.status, ...counts };
}

/** A key no request has used yet, so its first request is a cold authentication. */
export async function freshKey(
  orgId: string,
  accountId: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const created = await internalOk<{ key: string }>("POST", `/orgs/${orgId}/api-keys`, {
    account_id: accountId,
    created_by: accountId,
    ...extra,
  });
  return created.key;
}

/** A project of `owner`'s with one deployment in its production environment. */
export async function projectWithDeployment(owner: Caller) {
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const stack = await createStack(environmentId);
  const deployment = await createDeployment(environmentId, [stack.id]);
  return { project, environmentId, stack: { id: stack.id, deploymentId: deployment.id } };
}

/** A list's status and the ids (or account ids) of its page, through the shared test request. */
export async function list(path: string, key: string): Promise<{ status: number; ids: string[] }> {
  const res = await request<{ data?: { id?: string; account_id?: string }[] }>("GET", path, { key });
  return { status: res.status, ids: (res.body.data ?? []).map((item) => item.id ?? item.account_id ?? "") };
}
