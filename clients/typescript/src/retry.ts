/**
 * The fetch under the typed client: the API key, an `Idempotency-Key` on every write (the same on
 * each of its retries), and bounded retries of what a retry can cure.
 */

export type RetryOptions = {
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
  /** A number in [0, 1) for the jitter of a back-off (default `Math.random`). */
  random?: () => number;
  /** Extra headers on every request (a `User-Agent`, say). */
  headers?: Record<string, string>;
  /** Told before each wait between two attempts (to say why a command is quiet for a while). */
  onRetry?: (retry: RetryInfo) => void;
};

export type RetryInfo = {
  /** The attempt that failed (1 for the first). */
  attempt: number;
  /** How long the client waits before the next one. */
  delayMs: number;
  /** The answer that is retried (429, 5xx, a 409 with `Retry-After`), or null when none came. */
  response: Response | null;
  request: Request;
};

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** `Retry-After` in ms (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(res: Response | null): number | null {
  const header = res?.headers.get("retry-after")?.trim();
  if (!header) return null;
  if (/^\d+$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/**
 * The longest wait before attempt `attempt + 1`: `Retry-After` when the answer has one, else the
 * exponential back-off 0.5 s × 2^(attempt − 1); never over `maxDelayMs`.
 */
export function retryDelayMs(res: Response | null, attempt: number, maxDelayMs: number): number {
  return Math.min(retryAfterMs(res) ?? 500 * 2 ** (attempt - 1), maxDelayMs);
}

/**
 * The wait actually taken. A server's `Retry-After` is obeyed as given. A back-off of our own is
 * "equal jitter": a random point in its upper half, so that many clients failed by one outage
 * do not all come back in the same instant, yet none retries at once.
 */
export function backoffMs(
  res: Response | null,
  attempt: number,
  maxDelayMs: number,
  random: () => number = Math.random,
): number {
  const ceiling = retryDelayMs(res, attempt, maxDelayMs);
  if (retryAfterMs(res) !== null) return ceiling;
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

export const defaultSleep = (ms: number, signal?: AbortSignal | null): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** A fetch that adds the key, the idempotency key on writes, and bounded retries. */
export function retryingFetch(options: RetryOptions): typeof globalThis.fetch {
  const inner = options.fetch ?? globalThis.fetch.bind(globalThis);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 4);
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  const random = options.random ?? Math.random;
  return async (input, init) => {
    const original = new Request(input, init);
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (!original.headers.has(name)) original.headers.set(name, value);
    }
    original.headers.set("x-api-key", options.apiKey);
    if (WRITE_METHODS.has(original.method) && !original.headers.has("idempotency-key")) {
      original.headers.set("idempotency-key", crypto.randomUUID());
    }
    const keyed = original.headers.has("idempotency-key");
    const sleep = options.sleep ?? ((ms: number) => defaultSleep(ms, original.signal));
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await inner(original.clone());
      } catch (err) {
        // A request that never got an answer (connection refused or reset) is retried when doing
        // so is safe: a read, or a write whose Idempotency-Key makes a second arrival a replay.
        if (original.signal.aborted || !isNetworkError(err) || attempt >= maxAttempts) throw err;
        const delayMs = backoffMs(null, attempt, maxDelayMs, random);
        options.onRetry?.({ attempt, delayMs, response: null, request: original });
        await sleep(delayMs);
        continue;
      }
      if (!retryable(res, keyed) || attempt >= maxAttempts)
        return res.status === 304 ? notModified(res) : res;
      await res.body?.cancel();
      const delayMs = backoffMs(res, attempt, maxDelayMs, random);
      options.onRetry?.({ attempt, delayMs, response: res, request: original });
      await sleep(delayMs);
    }
  };
}

/** fetch rejects with a `TypeError` when no answer came (DNS, refused, reset); not on an abort. */
function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError;
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
