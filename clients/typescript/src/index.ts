/**
 * A typed client of the Deployment Platform API: openapi-fetch over the types generated from
 * `/openapi.json` (src/schema.d.ts, `npm run generate`), plus what a careful caller adds:
 *  - 429 and 5xx answers are retried (bounded attempts), waiting `Retry-After` seconds when the
 *    server says so, else an exponential backoff;
 *  - every POST, PUT, PATCH and DELETE carries an `Idempotency-Key` (a random UUID unless the
 *    caller set one), the same on each of its retries, so a retried write executes once; a
 *    `409` with `Retry-After` (that key's first attempt is still executing, API_CONTRACT §11) is
 *    retried too, to get that attempt's answer;
 *  - a `304 Not Modified` (a GET sent with `If-None-Match`) comes back as `{ data: undefined,
 *    error: undefined, response }`: check `response.status === 304` before reading `data`;
 *  - `pages()` walks a keyset-paginated list (`after` ← `next_page`);
 *  - `follow()` yields a deployment's timeline live, reconnecting with `Last-Event-ID`, and
 *    `waitForDeployment()` waits until it is final.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, paths };
export type ApiErrorBody = components["schemas"]["Error"];

export type ClientOptions = {
  /** e.g. `http://localhost:8787`. */
  baseUrl: string;
  /** An API key (`dpk_…`). In a browser, use a key scoped to what the page needs. */
  apiKey: string;
  /** Attempts per request, the first included (default 4). */
  maxAttempts?: number;
  /** Upper bound of one wait between attempts, in ms (default 60 000). */
  maxDelayMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
  /** How to wait (tests may pass a fake). */
  sleep?: (ms: number) => Promise<void>;
};

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** The delay before attempt `attempt + 1`: `Retry-After` when present, else 0.5 s × 2^attempt. */
export function retryDelayMs(res: Response, attempt: number, maxDelayMs: number): number {
  const header = res.headers.get("retry-after");
  let ms = 500 * 2 ** (attempt - 1);
  if (header !== null) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) ms = seconds * 1000;
    else {
      const date = Date.parse(header);
      if (!Number.isNaN(date)) ms = Math.max(0, date - Date.now());
    }
  }
  return Math.min(ms, maxDelayMs);
}

/** A fetch that adds the key, the idempotency key on writes, and bounded retries. */
export function retryingFetch(options: ClientOptions): typeof globalThis.fetch {
  const inner = options.fetch ?? globalThis.fetch.bind(globalThis);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async (input, init) => {
    const original = new Request(input, init);
    original.headers.set("x-api-key", options.apiKey);
    if (WRITE_METHODS.has(original.method) && !original.headers.has("idempotency-key")) {
      original.headers.set("idempotency-key", crypto.randomUUID());
    }
    const keyed = original.headers.has("idempotency-key");
    for (let attempt = 1; ; attempt++) {
      const res = await inner(original.clone());
      if (!retryable(res, keyed) || attempt >= maxAttempts)
        return res.status === 304 ? notModified(res) : res;
      await res.body?.cancel();
      await sleep(retryDelayMs(res, attempt, maxDelayMs));
    }
  };
}

/**
 * 429 and 5xx; and, for a write with an Idempotency-Key, the `409` that carries `Retry-After`:
 * the key's first attempt (an earlier try of this very request) is still executing.
 */
function retryable(res: Response, keyed: boolean): boolean {
  if (res.status === 429 || res.status >= 500) return true;
  return keyed && res.status === 409 && res.headers.has("retry-after");
}

/**
 * A 304 has no body. openapi-fetch reads an answer that says so (`Content-Length: 0`) as empty;
 * without it, it would parse the empty text as the error (`error: ""`).
 */
function notModified(res: Response): Response {
  const headers = new Headers(res.headers);
  headers.set("content-length", "0");
  return new Response(null, { status: 304, statusText: res.statusText, headers });
}

export type DeployClient = Client<paths>;

/** The typed client: `client.GET("/v1/projects", { params: { query: { limit: 20 } } })`. */
export function createDeployClient(options: ClientOptions): DeployClient {
  return createClient<paths>({ baseUrl: options.baseUrl, fetch: retryingFetch(options) });
}

/** A failed call, with the API's `{code, message, cause}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
  }
}

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type PageResult<T> = { data?: Page<T>; error?: ApiErrorBody; response: Response };

/**
 * Every item of a list, page after page:
 * `for await (const p of pages((after) => client.GET("/v1/projects", { params: { query: { after } } })))`.
 */
export async function* pages<T>(
  fetchPage: (after: string | undefined) => Promise<PageResult<T>>,
): AsyncGenerator<T> {
  let after: string | undefined;
  do {
    const { data, error, response } = await fetchPage(after);
    if (!data) throw new ApiError(response.status, error ?? { code: "internal", message: "No body." });
    yield* data.data;
    after = data.has_more ? data.next_page : undefined;
  } while (after !== undefined);
}

export type TimelineEntry = components["schemas"]["DeploymentTimelineEntry"];
export type Deployment = components["schemas"]["Deployment"];

const FINAL_STATUSES = new Set(["succeeded", "failed", "cancelled"]);

type StreamEvent = { event: string; data: string };

/** The events of a `text/event-stream` body (comments skipped), as they arrive. */
async function* streamEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: StreamEvent = { event: "message", data: "" };
        for (const line of block.split("\n")) {
          const at = line.indexOf(":");
          if (at === 0) continue;
          const [name, value] =
            at < 0 ? [line, ""] : [line.slice(0, at), line.slice(at + 1).replace(/^ /, "")];
          if (name === "event") event.event = value;
          else if (name === "data") event.data = event.data ? `${event.data}\n${value}` : value;
        }
        if (event.data) yield event;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export type FollowOptions = {
  /** Start after this `seq` (default 0: the whole timeline). */
  afterSeq?: number;
  /** Stops following (the iteration throws the abort reason). */
  signal?: AbortSignal;
};

/**
 * Every entry of a deployment's timeline (API_CONTRACT §19), in order, each once, until the
 * deployment is final; the iteration's return value is the final deployment record:
 * `for await (const entry of follow(options, id)) console.log(entry.seq, entry.message)`.
 * It reconnects with `Last-Event-ID` whenever the stream ends without `end` (its 15 minutes, a
 * dropped connection), after a pause when that keeps happening; `429` and `5xx` are retried as
 * every request of the client is; any other refusal throws `ApiError`.
 */
export async function* follow(
  options: ClientOptions,
  deploymentId: string,
  opts: FollowOptions = {},
): AsyncGenerator<TimelineEntry, Deployment> {
  const fetcher = retryingFetch(options);
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const url = `${options.baseUrl}/v1/deployments/${encodeURIComponent(deploymentId)}/timeline`;
  let last = opts.afterSeq ?? 0;
  for (let idle = 0; ; ) {
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (last > 0) headers["last-event-id"] = String(last);
    const before = last;
    try {
      const res = await fetcher(url, { headers, ...(opts.signal ? { signal: opts.signal } : {}) });
      if (res.status !== 200 || !res.body) {
        const body = (await res.json().catch(() => null)) as ApiErrorBody | null;
        throw new ApiError(res.status, body ?? { code: "internal", message: `HTTP ${res.status}` });
      }
      for await (const event of streamEvents(res.body)) {
        if (event.event === "end") return JSON.parse(event.data) as Deployment;
        if (event.event !== "status" && event.event !== "log") continue;
        const entry = JSON.parse(event.data) as TimelineEntry;
        if (entry.seq <= last) continue;
        last = entry.seq;
        yield entry;
      }
    } catch (err) {
      if (err instanceof ApiError || opts.signal?.aborted) throw err;
      // A dropped connection: reconnect below, from the last entry received.
    }
    // Ended without `end`: reconnect at once after progress, else back off (0.5 s … 30 s).
    idle = last > before ? 0 : idle + 1;
    if (idle > 0) await sleep(Math.min(30_000, 250 * 2 ** idle));
  }
}

/**
 * Waits until a deployment is final (`GET /v1/deployments/{id}/wait`, one long request after
 * another), or until `timeoutMs` has passed: answers the deployment as it then stands (check
 * its `status`). Refusals throw `ApiError`.
 */
export async function waitForDeployment(
  options: ClientOptions,
  deploymentId: string,
  opts: { timeoutMs?: number } = {},
): Promise<Deployment> {
  const client = createDeployClient(options);
  const until = opts.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  for (;;) {
    const seconds = Math.min(60, Math.max(1, Math.ceil((until - Date.now()) / 1000)));
    const { data, error, response } = await client.GET("/v1/deployments/{id}/wait", {
      params: { path: { id: deploymentId }, query: { timeout: seconds } },
    });
    if (!data) throw new ApiError(response.status, error ?? { code: "internal", message: "No body." });
    if (FINAL_STATUSES.has(data.status) || Date.now() >= until) return data;
  }
}
