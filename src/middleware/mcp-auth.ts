/**
 * The MCP endpoint's door (docs/clients.md "MCP server"): the same API key as /v1, checked before the MCP
 * server (src/mcp/) is loaded, so a request without a valid key costs a new isolate no MCP code
 * and reaches no tool. The key is checked as /v1 checks it (`authenticate`, the isolate's
 * cache of keys), and a refusal counts against the `anonymous` window of its client exactly as a
 * /v1 one does (`refuseAnonymous`): /mcp is no faster way to guess a key. A valid key costs no
 * rate-limit count here; each tool call is counted by the /v1 request it makes.
 *
 * A refusal answers as the MCP transport answers what it refuses before any message is read: a
 * JSON-RPC error object with `id` null, under the HTTP status the API would answer (401, or 429
 * with its `Retry-After`), never the API's `{code, message}` body, which an MCP client cannot read.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { authenticate } from "../services/api-keys/authenticate";
import { setCaller } from "./context";
import { refuseAnonymous } from "./rate-limit";

export const MCP_PATH = "/mcp";

/** JSON-RPC's "server error" range; the MCP transport answers its own HTTP-level refusals with it. */
export const JSON_RPC_SERVER_ERROR = -32000;

/**
 * MCP clients are configured with a bearer token (the MCP authorization spec's header), HTTP
 * clients of this API with `x-api-key`: either carries the key. Both at once must agree, or which
 * one acts would depend on which a proxy kept.
 */
export function mcpKey(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("x-api-key");
  const authorization = c.req.header("authorization");
  const bearer = authorization === undefined ? undefined : /^bearer +(\S+) *$/i.exec(authorization)?.[1];
  if (authorization !== undefined && bearer === undefined) {
    throw new ApiError("unauthenticated", "The Authorization header must be `Bearer <API key>`.");
  }
  if (header !== undefined && bearer !== undefined && header !== bearer) {
    throw new ApiError("unauthenticated", "x-api-key and the Authorization bearer name different keys.");
  }
  return header ?? bearer;
}

const KEY_REQUIRED = "An API key is required: `Authorization: Bearer dpk_…` or `x-api-key: dpk_…`.";

/** A refusal of a whole POST to /mcp: a JSON-RPC error object with `id` null under an HTTP status. */
export function jsonRpcError(
  status: number,
  error: { code: number; message: string; data?: unknown },
  headers: HeadersInit = {},
): Response {
  const all = new Headers(headers);
  all.set("content-type", "application/json");
  return new Response(JSON.stringify({ jsonrpc: "2.0", error, id: null }), { status, headers: all });
}

/** A JSON-RPC error response for a refusal the API would answer with `err`. */
export function jsonRpcRefusal(err: ApiError): Response {
  const headers = new Headers(err.headers);
  // RFC 9110 §11.6.1: a 401 names the scheme that would authenticate.
  if (err.code === "unauthenticated") headers.set("WWW-Authenticate", 'Bearer realm="deploy-platform-api"');
  const error = { code: JSON_RPC_SERVER_ERROR, message: err.message, data: err.toBody() };
  return jsonRpcError(err.status, error, headers);
}

export const mcpAuth = createMiddleware<AppEnv>(async (c, next) => {
  try {
    try {
      const key = mcpKey(c);
      if (key === undefined) throw new ApiError("unauthenticated", KEY_REQUIRED);
      setCaller(c, await authenticate(c.get("ctx"), key));
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== "unauthenticated") throw err;
      await refuseAnonymous(c, err);
    }
  } catch (err) {
    // `refuseAnonymous` always throws: its 401, or 429 once the client is over its window.
    if (err instanceof ApiError) return jsonRpcRefusal(err);
    throw err;
  }
  await next();
});
