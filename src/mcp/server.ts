/**
 * The MCP server at /mcp (docs/clients.md "MCP server"): Streamable HTTP, stateless, answered as JSON.
 * Loaded on the first /mcp request that passed authentication (src/app.ts), never when the Worker
 * starts: `npm run check:deploy` fails if the entry reaches this directory by a static import.
 *
 * Stateless: no session is kept between requests (any isolate serves any request). Every answer
 * is one JSON body, not an event stream: nothing here sends a message before its result. GET (a
 * stream for messages the server starts) and DELETE (the end of a session) have nothing to serve
 * without sessions: 405, which the spec and the SDK's client read as "not offered". The methods
 * served are MCP's lifecycle (`initialize`, `ping`) and tools (`tools/list`, `tools/call`); the
 * transport's rules are ./transport.ts's. The tools' list is ./tool-list.ts's.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type * as z from "zod";
import { ApiError, loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { readRawBody } from "../http/raw-body";
import { jsonRpcRefusal, mcpKey } from "../middleware/mcp-auth";
import { ApiRefusal, apiFor } from "./api";
import { toolList } from "./tool-list";
import { TOOLS, type Tool } from "./tools";
import { handlePost, PROTOCOL_VERSIONS, RPC, RpcError, type RpcRequest, refusal } from "./transport";

/** The API's version (/openapi.json `info.version`; test/properties/mcp.test.ts holds them equal). */
const SERVER_INFO = { name: "deploy-platform-api", version: "1.1.0" };

const INSTRUCTIONS =
  "Tools over the deploy platform's API, acting as the API key this connection sends (its scopes and " +
  "roles apply). Plan before you change: plan_promotion before promote_deployment, plan_variable_changes " +
  "before apply_variable_changes (pass its base_version). A refusal is the API's own message; one that " +
  "names a scope means the key lacks it.";

/** The tools never change while a server runs: no `notifications/tools/list_changed` is sent. */
const CAPABILITIES = { tools: { listChanged: false } };

type ToolResult = {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: true;
};

const failed = (text: string): ToolResult => ({ isError: true, content: [{ type: "text", text }] });

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));

/** Each issue of a refused argument: its message, and where (`at a.b`) when not the whole. */
const issuesOf = (error: z.ZodError) =>
  error.issues.map((i) => (i.path.length ? `${i.message} at ${i.path.join(".")}` : i.message)).join("\n");

/** An API refusal as the tool's result: the API's status, code and message, and its `cause`. */
function refusalResult(err: ApiRefusal): ToolResult {
  const code = err.body?.code ?? "error";
  let text = `The API refused (${err.status} ${code}): ${err.message}`;
  if (err.retryAfter !== null) text += ` Retry after ${err.retryAfter} s.`;
  if (err.body?.cause !== undefined) text += `\ncause: ${JSON.stringify(err.body.cause)}`;
  return failed(text);
}

/**
 * `tools/call`: the arguments checked against the tool's schema (a refusal is the tool's error
 * result, and nothing reaches the API), then the tool run as the caller. An error of the tool is
 * its result, as MCP has it (the model reads it); the request itself succeeds.
 */
async function callTool(
  t: Tool | undefined,
  name: string,
  args: unknown,
  c: Context<AppEnv>,
  app: OpenAPIHono<AppEnv>,
  key: string,
): Promise<ToolResult> {
  if (t === undefined) return failed(`Tool ${name} not found.`);
  const parsed = t.input.safeParse(withoutNulls(t, args ?? {}));
  if (!parsed.success) {
    return failed(`Input validation error: Invalid arguments for tool ${name}: ${issuesOf(parsed.error)}`);
  }
  try {
    const result = (await t.run(apiFor(c, app, key, t.name), parsed.data as never)) as Record<
      string,
      unknown
    >;
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  } catch (err) {
    if (err instanceof ApiRefusal) return refusalResult(err);
    // Not the API's answer: a fault here. Logged with the request; the client learns no internals.
    c.get("ctx").log.error("mcp tool failed", { tool: t.name, error: loggableError(err) });
    return failed("Internal error; a retry may succeed.");
  }
}

/**
 * An optional argument given as `null` is one left out, as the API takes a null optional field (its
 * `nullAsAbsent`): models often send null for what they leave unset. Only an argument the tool
 * names and may go without: an unknown one stays, to be refused as the API refuses an unknown field,
 * and a required one stays, to be refused as null. Only the top level: no argument of a tool is
 * itself nullable (a null inside one, a variable to delete, keeps its meaning).
 */
function withoutNulls(t: Tool, args: unknown): unknown {
  if (typeof args !== "object" || args === null || Array.isArray(args)) return args;
  const shape = t.input.shape as Record<string, { safeParse(value: unknown): { success: boolean } }>;
  return Object.fromEntries(
    Object.entries(args).filter(
      ([name, value]) =>
        value !== null || !Object.hasOwn(shape, name) || !shape[name]?.safeParse(undefined).success,
    ),
  );
}

/** The methods this server serves, by name; any other is JSON-RPC's "method not found". */
function dispatcher(c: Context<AppEnv>, app: OpenAPIHono<AppEnv>, key: string) {
  return async (request: RpcRequest): Promise<Record<string, unknown>> => {
    const params = request.params ?? {};
    switch (request.method) {
      case "initialize": {
        const asked = params.protocolVersion;
        if (typeof asked !== "string") throw new RpcError(RPC.invalidParams, "protocolVersion is required.");
        return {
          // The client's revision when this server speaks it, else the newest it does (the client decides).
          protocolVersion: PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSIONS[0],
          capabilities: CAPABILITIES,
          serverInfo: SERVER_INFO,
          instructions: INSTRUCTIONS,
        };
      }
      case "ping":
        return {};
      case "tools/list":
        return toolList(c);
      case "tools/call": {
        const name = params.name;
        if (typeof name !== "string") throw new RpcError(RPC.invalidParams, "name is required.");
        return callTool(BY_NAME.get(name), name, params.arguments, c, app, key);
      }
      default:
        throw new RpcError(RPC.methodNotFound, `Method not found: ${request.method}`);
    }
  };
}

/** Serves one MCP request of a caller `mcpAuth` let in; `app` is the API its tools call. */
export async function serveMcp(c: Context<AppEnv>, app: OpenAPIHono<AppEnv>): Promise<Response> {
  if (c.req.method !== "POST") {
    const message = "Method not allowed: this stateless server takes POST.";
    return refusal(405, RPC.serverError, message, { allow: "POST" });
  }
  // `mcpAuth` accepted this key; the tools' requests present it again, as any request does.
  const key = mcpKey(c) as string;
  try {
    return await handlePost(c.req.raw, () => readRawBody(c), dispatcher(c, app, key));
  } catch (err) {
    // The body's own refusals (API_CONTRACT §6: over 1 MiB, not arrived in time), as JSON-RPC errors.
    if (err instanceof ApiError) return jsonRpcRefusal(err);
    throw err;
  }
}
