/** A small HTTP client over the real Worker (`exports.default.fetch`): no mocks of the platform. */
import { createExecutionContext, env, evictDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { createApp } from "../../src/app";
import { expectDocumentedResponse } from "./openapi";

export type ApiResponse<T = unknown> = { status: number; body: T; headers: Headers; raw: string };

export type RequestOptions = {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * Send `body` as-is instead of JSON-encoding it: a string (which `fetch` labels
   * `text/plain;charset=UTF-8` unless a content-type is given), bytes or a stream (no content-type
   * added; a stream goes without content-length, as a chunked upload).
   */
  rawBody?: string | Uint8Array | ReadableStream<Uint8Array>;
  /**
   * Bindings to run this request with instead of the test configuration's (through the same app,
   * with its own execution context), e.g. `PRODUCTION_LIMITS` or a broken VARIABLES_KEY.
   */
  bindings?: Partial<Env> & Record<string, unknown>;
  /**
   * Skip the check against /openapi.json (see `request`). Only for a request that deliberately
   * produces an answer outside the document; say why beside each use.
   */
  unchecked?: boolean;
};

/**
 * The client address every test request comes from (a documentation prefix), unless a test sets
 * its own: the audit log records it. One address for all: the test configuration raises the
 * per-IP limit, so no test needs an address of its own to stay under it.
 */
export const TEST_CLIENT_IP = "2001:db8::1";

/**
 * A client IP no other test uses: random, in the IPv6 documentation prefix. For requests under
 * PRODUCTION_LIMITS, whose `anonymous` window is counted per client IP.
 */
export const freshClientIp = () => {
  const [a, b, c] = crypto.getRandomValues(new Uint16Array(3));
  return `2001:db8:${a?.toString(16)}:${b?.toString(16)}:${c?.toString(16)}::1`;
};

/**
 * A RATE_LIMITER namespace whose objects always throw, for `bindings`: the one stand-in the tests
 * use for an unreachable or failing Durable Object (the rate-limit middleware fails open).
 */
export function brokenRateLimiter(
  message = "Durable Object reset because its code was updated.",
): Env["RATE_LIMITER"] {
  return {
    idFromName: (name: string) => env.RATE_LIMITER.idFromName(name),
    get: () => ({ admit: () => Promise.reject(new Error(message)) }),
  } as unknown as Env["RATE_LIMITER"];
}

/**
 * The DB binding, every session of which runs `hooks[prefix]` ahead of each statement whose SQL
 * starts with `prefix` (run alone, or in a batch): an interleaving made exact (the hook writes
 * what a concurrent request would have), or a failure (it rejects: `failingStatements`). The other
 * statements are the real ones.
 */
export function interceptStatements(hooks: Record<string, () => Promise<void>>): D1Database {
  const marked = new WeakMap<object, () => Promise<void>>();
  const statementOf = (sqlText: string, statement: D1PreparedStatement): D1PreparedStatement => {
    const before = Object.entries(hooks).find(([prefix]) => sqlText.startsWith(prefix))?.[1];
    const wrapped = new Proxy(statement, {
      get(inner, prop) {
        if (prop === "bind") return (...values: unknown[]) => statementOf(sqlText, inner.bind(...values));
        const value = Reflect.get(inner, prop);
        if (typeof value !== "function") return value;
        if (before) return (...args: unknown[]) => before().then(() => value.apply(inner, args));
        return value.bind(inner);
      },
    });
    if (before) marked.set(wrapped, before);
    return wrapped;
  };
  const session = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(inner, prop) {
        if (prop === "prepare") {
          return (sqlText: string) => statementOf(sqlText, (inner as D1Database).prepare(sqlText));
        }
        if (prop === "withSession") {
          return (start: string) => session((inner as D1Database).withSession(start));
        }
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            for (const statement of statements) await marked.get(statement)?.();
            return (inner as D1Database).batch(statements);
          };
        }
        const value = Reflect.get(inner, prop);
        return typeof value === "function" ? value.bind(inner) : value;
      },
    });
  return session(env.DB);
}

/** The DB binding, failing the statements whose SQL starts with `prefix` (a batch holding one, whole). */
export const failingStatements = (prefix: string): D1Database =>
  interceptStatements({ [prefix]: () => Promise.reject(new Error("D1_ERROR: injected failure")) });

/** `before`, run once, the first time it is called (for `interceptStatements`). */
export function once(before: () => Promise<void>): () => Promise<void> {
  let ran = false;
  return async () => {
    if (ran) return;
    ran = true;
    await before();
  };
}

/** The RATE_LIMITER object of `subject` (`key:<id>`, `trust:<id>`, `ip:<address>`): the real Durable Object. */
export const limiterOf = (subject: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(subject));

/**
 * Inside a limiter object (`runInDurableObject`): as if its key's last use had been written more
 * than its interval ago (src/rate-limit/key-use.ts), so the object keeps nothing for it.
 */
export function forgetKeyUse(instance: object, state: DurableObjectState): void {
  state.storage.sql.exec("DELETE FROM key_uses");
  (instance as { uses?: unknown }).uses = undefined;
}

/**
 * Restarts a Durable Object: its next call runs its constructor again and reads its storage
 * afresh. The runtime may already have evicted an idle object on its own (it refuses to evict one
 * that is not running), which leaves it in the same state.
 */
export async function restartObject(stub: DurableObjectStub): Promise<void> {
  try {
    await evictDurableObject(stub);
  } catch (err) {
    if (!(err instanceof Error && /not currently running/.test(err.message))) throw err;
  }
}

/** The production rate limits: the test configuration's RATE_LIMITS override removed. */
export const PRODUCTION_LIMITS = { RATE_LIMITS: "" } as const;

/**
 * A request to the Worker. The response of a documented operation (a method and path that fall
 * under an operation of /openapi.json) is checked against the document unless `unchecked`: the
 * status is declared, a body is JSON matching the declared schema (test/helpers/openapi.ts). Every
 * response, documented or not, must carry `X-Content-Type-Options: nosniff` (`expectNoSniff`).
 */
export async function request<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {
    accept: "application/json",
    "cf-connecting-ip": TEST_CLIENT_IP,
    ...options.headers,
  };
  if (options.key) headers["x-api-key"] = options.key;
  let body: string | Uint8Array | ReadableStream<Uint8Array> | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const req = new Request(`http://api.test${path}`, { method, headers, body });
  const res = options.bindings ? await fetchWith(req, options.bindings) : await exports.default.fetch(req);
  const raw = await res.text();
  let parsed: unknown = null;
  if (raw) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = raw;
    }
  }
  const response = { status: res.status, body: parsed as T, headers: res.headers, raw };
  expectNoSniff(method, path, response);
  if (!options.unchecked) await expectDocumentedResponse(method, path, response);
  return response;
}

/** API_CONTRACT §22: every response, of every path and status, carries `X-Content-Type-Options: nosniff`. */
export function expectNoSniff(method: string, path: string, res: Pick<ApiResponse, "status" | "headers">) {
  if (res.headers.get("x-content-type-options") !== "nosniff")
    throw new Error(`${method} ${path} → ${res.status}: no X-Content-Type-Options: nosniff`);
}

async function fetchWith(req: Request, bindings: Partial<Env> & Record<string, unknown>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await createApp().fetch(req, { ...env, ...bindings }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** The internal API, authenticated with the test ADMIN_TOKEN. */
export async function internal<T = Record<string, unknown>>(
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse<T>> {
  return request<T>(method, `/internal/v1${path}`, {
    body,
    headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
  });
}

/** Internal call that must succeed; returns the body. */
export async function internalOk<T = Record<string, unknown>>(method: string, path: string, body?: unknown) {
  const res = await internal<T>(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.raw}`);
  return res.body;
}
