/**
 * In the Worker's bundle in place of `zod/v3` (wrangler.toml [alias]). The MCP SDK accepts zod 3
 * schemas beside zod 4 ones and reaches zod 3 only for a zod 3 schema; every schema of this Worker
 * is zod 4 (src/lib/zod), so zod 3's 56 KiB is never run, and is left out of every isolate's compile.
 */
export function object(): never {
  throw new Error("zod 3 is left out of the Worker's bundle (src/mcp/left-out/zod-v3.ts)");
}
