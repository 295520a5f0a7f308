/**
 * `tools/list`'s answer (./server.ts): each tool's arguments and answer as JSON Schema (draft 7, as
 * MCP clients read them; the arguments as a caller writes them, defaults optional; the answer as
 * the tool returns it), spelled so that every client takes them (./portable-schema.ts).
 *
 * Built from the tools' schemas where the source runs (`npm run dev`, the tests). The deployed
 * build (scripts/build.mjs) converts no schema: it answers the list the build made from the same
 * source (`toolListFromSchemas`, by scripts/openapi-json.ts) and wrote among the assets at
 * TOOL_LIST_ASSET_PATH, and leaves zod's JSON Schema conversion out of its modules
 * (scripts/build-document.mjs); `npm run check:deploy` compares the two lists.
 */
import type { Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../http/app-env";
import { buildAsset } from "../http/build-asset";
import { once } from "../lib/once";
import { portableSchema } from "./portable-schema";
import { TOOLS } from "./tools";

/** Where the deployed build writes the list among the assets (reached by no path of its own). */
export const TOOL_LIST_ASSET_PATH = "/docs/mcp-tools.json";

export type ToolList = { tools: Array<Record<string, unknown>> };

/** The list, made from the tools' schemas. */
export function toolListFromSchemas(): ToolList {
  return {
    tools: TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: portableSchema(z.toJSONSchema(t.input, { target: "draft-7", io: "input" })),
      outputSchema: portableSchema(z.toJSONSchema(t.output, { target: "draft-7", io: "output" })),
      annotations: { title: t.title, ...t.annotations },
    })),
  };
}

// In the deployed build, read from the assets once per isolate (src/http/build-asset.ts); made
// from the schemas, once per isolate too. Pure: the deployed build, which never calls it, drops it.
const toolListFromAsset = buildAsset<ToolList>(TOOL_LIST_ASSET_PATH, "the MCP tools' list");
const madeFromSchemas = /* @__PURE__ */ once(toolListFromSchemas);

/** `tools/list`'s answer, as above. */
export async function toolList(c: Context<AppEnv>): Promise<ToolList> {
  // One expression: the deployed build's define leaves the asset's branch alone, and the conversion
  // is then in no module (an `if` with a `return` before it would keep it there).
  return globalThis.__DOCUMENT_FROM_BUILD__ ? toolListFromAsset(c) : madeFromSchemas();
}
