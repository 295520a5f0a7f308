/**
 * How a tool acts: through the API's own operations, never past them. Each call is a /v1 request
 * dispatched through the app in-process (`app.fetch`, no network), with the MCP caller's key, so
 * authentication, scopes, the rate limit, Idempotency-Keys, the audit log and every refusal apply
 * exactly as they would to the same request sent over HTTP; a tool reads no database itself.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/app-env";

/** An answer of 400 or above, as the API gave it. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: { code?: string; message?: string; cause?: unknown } | null,
    readonly retryAfter: string | null,
  ) {
    super(body?.message ?? `The API answered ${status}.`);
    this.name = "ApiRefusal";
  }
}

export type Call = {
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /**
   * The Idempotency-Key of a write: every write a tool makes sends one (the tool's argument, else a
   * new one), so that a write answered but lost on its way back is never made twice by the API.
   */
  idempotencyKey?: string;
};

export type Api = {
  /** The JSON body of a 2xx answer (null for 204); an ApiRefusal for anything else. */
  call<T>(method: string, path: string, options?: Call): Promise<T>;
};

/** The request ids the API accepts from a caller (src/middleware/context.ts). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * How many API calls each MCP request has made so far, over all its tool calls: a JSON-RPC batch
 * runs several tools for one HTTP request, and each of their calls needs a number of its own.
 */
const callsMade = new WeakMap<Context<AppEnv>, number>();

/**
 * The API as `tool` calls it for the MCP request `c`, with `key`. Each call's request id is the MCP
 * request's with a sequence number (`<id>.1`, `<id>.2`), counted over every tool call of that
 * request (a batch's included): the audit entries and logs of a call lead back to the MCP request
 * that made it, and no two calls share an id. Its user agent is the MCP client's, naming the
 * tool, so the audit log tells a change made through a tool from one made by hand.
 */
export function apiFor(c: Context<AppEnv>, app: OpenAPIHono<AppEnv>, key: string, tool: string): Api {
  const parentId = c.get("ctx").requestId.slice(0, 120);
  const userAgent = `${c.req.header("user-agent") ?? "mcp-client"} deploy-platform-mcp/${tool}`;
  const clientIp = c.req.header("cf-connecting-ip");
  // Tests may call the app without an execution context; the sub-request then runs without one too.
  let executionCtx: Context<AppEnv>["executionCtx"] | undefined;
  try {
    executionCtx = c.executionCtx;
  } catch {
    executionCtx = undefined;
  }
  return {
    async call<T>(method: string, path: string, options: Call = {}): Promise<T> {
      const url = new URL(path, "http://internal");
      for (const [name, value] of Object.entries(options.query ?? {})) {
        if (value !== undefined) url.searchParams.set(name, String(value));
      }
      const headers = new Headers({ accept: "application/json", "x-api-key": key, "user-agent": userAgent });
      const sequence = (callsMade.get(c) ?? 0) + 1;
      callsMade.set(c, sequence);
      const requestId = `${parentId}.${sequence}`;
      if (REQUEST_ID.test(requestId)) headers.set("x-request-id", requestId);
      if (clientIp !== undefined) headers.set("cf-connecting-ip", clientIp);
      if (options.idempotencyKey !== undefined) headers.set("idempotency-key", options.idempotencyKey);
      let body: string | undefined;
      if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers.set("content-type", "application/json");
      }
      const res = await app.fetch(new Request(url, { method, headers, body }), c.env, executionCtx);
      const parsed = await jsonOf(res);
      if (res.status >= 400) {
        throw new ApiRefusal(res.status, parsed as ApiRefusal["body"], res.headers.get("retry-after"));
      }
      return parsed as T;
    },
  };
}

/** A body as JSON; null when empty or not JSON (the API answers JSON, but a refusal needs no body). */
async function jsonOf(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}
