/**
 * MCP's Streamable HTTP transport, as a stateless server that answers every POST with one JSON body
 * (MCP 2025-06-18 "Transports"): the HTTP-level rules a POST must pass, the JSON-RPC 2.0 messages it
 * carries, and the answer that collects their results. What the messages mean is ./server.ts's.
 *
 * The rules and their answers are those of the official SDK's server transport
 * (`WebStandardStreamableHTTPServerTransport` with `enableJsonResponse` and no sessions), which
 * this server used until its 26 KiB gzip were worth more than its generality (bench/README.md):
 * the same statuses and JSON-RPC codes, so a client sees no difference; test/properties/mcp.test.ts
 * drives it with the SDK's own client.
 */
import { JSON_RPC_SERVER_ERROR, jsonRpcError } from "../middleware/mcp-auth";

/** The protocol revisions a client may speak, newest first; the newest is offered to any other. */
export const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

/** JSON-RPC 2.0's codes, and its "server error" range, which the transport's refusals use. */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  serverError: JSON_RPC_SERVER_ERROR,
} as const;

/** Messages in one batch at most (the SDK's bound). */
const MAX_BATCH = 100;

type Id = string | number;
export type RpcRequest = { jsonrpc: "2.0"; id: Id; method: string; params?: Record<string, unknown> };
type Message =
  | RpcRequest
  | { jsonrpc: "2.0"; method: string; params?: Record<string, unknown> }
  | { jsonrpc: "2.0"; id: Id; result: Record<string, unknown> }
  | { jsonrpc: "2.0"; id: Id; error: { code: number; message: string } };

/** A JSON-RPC error a method answers with (the request's `error` member). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = "RpcError";
  }
}

/** What a request of `method` answers: its result, or an RpcError. */
export type Dispatch = (request: RpcRequest) => Promise<Record<string, unknown>>;

const JSON_TYPE = { "content-type": "application/json" };

/** A refusal of the whole POST: a JSON-RPC error object with `id` null under an HTTP status. */
export const refusal = (status: number, code: number, message: string, headers: HeadersInit = {}) =>
  jsonRpcError(status, { code, message }, headers);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is Id => typeof v === "string" || (typeof v === "number" && Number.isInteger(v));

/** Whether `m` is a JSON-RPC 2.0 request, notification, result or error (MCP's id is never null). */
function isMessage(m: unknown): m is Message {
  if (!isObject(m) || m.jsonrpc !== "2.0") return false;
  if ("method" in m) {
    return (
      typeof m.method === "string" &&
      (m.params === undefined || isObject(m.params)) &&
      (!("id" in m) || isId(m.id))
    );
  }
  if (!isId(m.id)) return false;
  if ("result" in m) return isObject(m.result);
  return isObject(m.error) && Number.isInteger(m.error.code) && typeof m.error.message === "string";
}
const isRequest = (m: Message): m is RpcRequest => "method" in m && "id" in m;

/**
 * One POST: the transport's checks in the SDK's order (Accept, Content-Type, the body, JSON,
 * messages, one initialize alone, the protocol version header), then every request dispatched in
 * order; a POST of notifications and results only is `202` with no body. `body` reads the body
 * (bounded in size and time as every request's is: its refusal is the caller's to answer).
 */
export async function handlePost(
  req: Request,
  body: () => Promise<Uint8Array>,
  dispatch: Dispatch,
): Promise<Response> {
  const accept = req.headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    const message = "Not Acceptable: Client must accept both application/json and text/event-stream";
    return refusal(406, RPC.serverError, message);
  }
  const mediaType = req.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") {
    return refusal(415, RPC.serverError, "Unsupported Media Type: Content-Type must be application/json");
  }
  const text = new TextDecoder().decode(await body());
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return refusal(400, RPC.parseError, "Parse error: Invalid JSON");
  }
  if (Array.isArray(raw) && raw.length > MAX_BATCH) {
    return refusal(400, RPC.invalidRequest, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
  }
  const messages: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (messages.length === 0 || !messages.every(isMessage)) {
    return refusal(400, RPC.parseError, "Parse error: Invalid JSON-RPC message");
  }
  const initialize = messages.some((m) => isRequest(m) && m.method === "initialize");
  if (initialize && messages.length > 1) {
    return refusal(400, RPC.invalidRequest, "Invalid Request: Only one initialization request is allowed");
  }
  const version = req.headers.get("mcp-protocol-version");
  if (!initialize && version !== null && !PROTOCOL_VERSIONS.includes(version)) {
    const message = `Bad Request: Unsupported protocol version: ${version} (supported versions: ${PROTOCOL_VERSIONS.join(", ")})`;
    return refusal(400, RPC.serverError, message);
  }
  const requests = messages.filter(isRequest);
  if (requests.length === 0) return new Response(null, { status: 202 });
  const answers = [];
  for (const request of requests) {
    try {
      answers.push({ jsonrpc: "2.0", id: request.id, result: await dispatch(request) });
    } catch (err) {
      if (!(err instanceof RpcError)) throw err;
      answers.push({ jsonrpc: "2.0", id: request.id, error: { code: err.code, message: err.message } });
    }
  }
  const answer = Array.isArray(raw) ? answers : answers[0];
  return new Response(JSON.stringify(answer), { status: 200, headers: JSON_TYPE });
}
