/**
 * A JSON file the deployed build (scripts/build.mjs) wrote among the Worker's static assets, at a
 * path no request reaches (wrangler.toml `run_worker_first`): the OpenAPI document
 * (src/openapi/document-asset.ts) and the MCP tools' list (src/mcp/tool-list.ts). Read through
 * `ASSETS` on first use and kept for the isolate's life (the build's assets do not change while it
 * lives); concurrent first requests each read it with their own `ASSETS` call, never awaiting
 * another's (src/lib/once.ts says why).
 */
import type { Context } from "hono";
import type { AppEnv } from "./app-env";

/** The reader of the file at `path`; `what` names it in the error a missing file raises. */
export function buildAsset<T>(path: string, what: string): (c: Context<AppEnv>) => Promise<T> {
  let kept: T | undefined;
  return async (c) => {
    if (kept !== undefined) return kept;
    const res = await c.env.ASSETS.fetch(new URL(path, c.req.url));
    if (!res.ok) throw new Error(`${what} is not among the assets (${res.status}): run the build`);
    const value = (await res.json()) as T;
    kept ??= value;
    return kept;
  };
}
