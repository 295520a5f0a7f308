/**
 * In the Worker's bundle in place of `zod-to-json-schema` (wrangler.toml [alias]): the MCP SDK
 * converts only zod 3 schemas with it (zod 4 converts its own), and this Worker has none (./zod-v3.ts).
 */
export function zodToJsonSchema(): never {
  throw new Error(
    "zod-to-json-schema is left out of the Worker's bundle (src/mcp/left-out/zod-to-json-schema.ts)",
  );
}
