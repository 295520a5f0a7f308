/**
 * The MCP server at /mcp (README "MCP server"): Streamable HTTP, stateless, answered as JSON.
 * Loaded on the first /mcp request that passed authentication (src/app.ts), never when the Worker
 * starts: `npm run check:deploy` fails if the entry reaches this directory or the SDK by a static
 * import.
 *
 * Stateless: no session is kept between requests (any isolate serves any request), so each POST
 * gets its own server and transport, as the SDK requires of a stateless transport; the tools'
 * schemas are built once per isolate (./tools.ts). Every answer is one JSON body, not an event
 * stream: nothing here sends a message before its result. GET (a stream for messages the server
 * starts) and DELETE (the end of a session) have nothing to serve without sessions: 405, which
 * the spec and the SDK's client read as "not offered".
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Context } from "hono";
import { loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { MAX_BODY_BYTES } from "../http/raw-body";
import { JSON_RPC_SERVER_ERROR, mcpKey } from "../middleware/mcp-auth";
import { ApiRefusal, apiFor } from "./api";
import { TOOLS, type Tool } from "./tools";

/** The API's version (/openapi.json `info.version`; test/properties/mcp.test.ts holds them equal). */
const SERVER_INFO = { name: "deploy-platform-api", version: "1.1.0" };

const INSTRUCTIONS =
  "Tools over the deploy platform's API, acting as the API key this connection sends (its scopes and " +
  "roles apply). Plan before you change: plan_promotion before promote_deployment, plan_variable_changes " +
  "before apply_variable_changes (pass its base_version). A refusal is the API's own message; one that " +
  "names a scope means the key lacks it.";

/**
 * The server's JSON Schema validator checks a client's answers to elicitation, which this server
 * never asks for. Given one, the SDK does not build its default (Ajv, which compiles schemas with
 * `new Function`: Workers forbid that, and the Worker's bundle leaves Ajv out, wrangler.toml [alias]).
 */
const NO_ELICITATION: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    throw new Error("this server validates no client answer: it asks for none");
  },
};

const methodNotAllowed = () =>
  new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: {
        code: JSON_RPC_SERVER_ERROR,
        message: "Method not allowed: this stateless server takes POST.",
      },
      id: null,
    }),
    { status: 405, headers: { allow: "POST", "content-type": "application/json" } },
  );

/** An API refusal as the tool's result: the API's status, code and message, and its `cause`. */
function refusalResult(err: ApiRefusal): CallToolResult {
  const code = err.body?.code ?? "error";
  let text = `The API refused (${err.status} ${code}): ${err.message}`;
  if (err.retryAfter !== null) text += ` Retry after ${err.retryAfter} s.`;
  if (err.body?.cause !== undefined) text += `\ncause: ${JSON.stringify(err.body.cause)}`;
  return { isError: true, content: [{ type: "text", text }] };
}

function register(server: McpServer, t: Tool, c: Context<AppEnv>, app: OpenAPIHono<AppEnv>, key: string) {
  server.registerTool(
    t.name,
    {
      title: t.title,
      description: t.description,
      inputSchema: t.input,
      outputSchema: t.output,
      annotations: { title: t.title, ...t.annotations },
    },
    async (args: unknown): Promise<CallToolResult> => {
      try {
        const result = (await t.run(apiFor(c, app, key, t.name), args as never)) as Record<string, unknown>;
        return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
      } catch (err) {
        if (err instanceof ApiRefusal) return refusalResult(err);
        // Not the API's answer: a fault here. Logged with the request; the client learns no internals.
        c.get("ctx").log.error("mcp tool failed", { tool: t.name, error: loggableError(err) });
        return { isError: true, content: [{ type: "text", text: "Internal error; a retry may succeed." }] };
      }
    },
  );
}

/** Serves one MCP request of a caller `mcpAuth` let in; `app` is the API its tools call. */
export async function serveMcp(c: Context<AppEnv>, app: OpenAPIHono<AppEnv>): Promise<Response> {
  if (c.req.method !== "POST") return methodNotAllowed();
  // `mcpAuth` accepted this key; the tools' requests present it again, as any request does.
  const key = mcpKey(c) as string;
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: INSTRUCTIONS,
    jsonSchemaValidator: NO_ELICITATION,
  });
  for (const t of TOOLS) register(server, t, c, app, key);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    // The API's own bound on a request body (API_CONTRACT §6).
    maxRequestBodySize: MAX_BODY_BYTES,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close();
  }
}
