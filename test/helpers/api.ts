/** A small HTTP client over the real Worker (`exports.default.fetch`): no mocks of the platform. */
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";

export type ApiResponse<T = unknown> = { status: number; body: T; headers: Headers; raw: string };

export type RequestOptions = {
  key?: string | null;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send `body` as-is (a string) instead of JSON-encoding it. */
  rawBody?: string;
};

// Each request comes from its own client IP (a documentation prefix), so failed
// authentications in different tests never share one `anonymous` rate-limit window.
let ipCounter = 0;

export async function request<T = unknown>(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = {
    accept: "application/json",
    "cf-connecting-ip": `2001:db8:ffff::${(++ipCounter).toString(16)}`,
    ...options.headers,
  };
  if (options.key) headers["x-api-key"] = options.key;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const res = await exports.default.fetch(new Request(`http://api.test${path}`, { method, headers, body }));
  const raw = await res.text();
  let parsed: unknown = null;
  if (raw) {
    try {
      parsed = JSON.parse(raw);
    } catch {
      parsed = raw;
    }
  }
  return { status: res.status, body: parsed as T, headers: res.headers, raw };
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
