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
 *  - `pages()` walks a keyset-paginated list (`after` ← `next_page`).
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
