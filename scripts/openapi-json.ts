/**
 * Writes the public OpenAPI document, as the Worker serves it at `GET /openapi.json`, to the
 * file named by the first argument (default `dist/openapi.json`). Built in Node from the same
 * `createApp()`; the origin is a placeholder https one, as a deployed Worker would publish. With a
 * second argument, writes there the MCP server's `tools/list` answer as the source makes it
 * (src/mcp/tool-list.ts), which the deployed build serves from its assets.
 * Run with tsx: `npx tsx scripts/openapi-json.ts [out] [tools-out]`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createApp } from "../src/app";
import { toolListFromSchemas } from "../src/mcp/tool-list";

const out = resolve(process.argv[2] ?? "dist/openapi.json");
const toolsOut = process.argv[3] === undefined ? undefined : resolve(process.argv[3]);
// No bindings: the document reads none. Every request still builds its service context
// (src/middleware/context.ts) from `env`, which opens nothing, so an empty one will do.
const noBindings = {} as Env;
const res = await createApp().request("https://deploy-platform-api.test/openapi.json", {}, noBindings);
if (res.status !== 200) throw new Error(`GET /openapi.json → ${res.status}`);
const doc = await res.json();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
if (toolsOut !== undefined) {
  mkdirSync(dirname(toolsOut), { recursive: true });
  writeFileSync(toolsOut, `${JSON.stringify(toolListFromSchemas(), null, 2)}\n`);
}
