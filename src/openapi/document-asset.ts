/**
 * `GET /openapi.json` in the deployed build: the document scripts/build.mjs generated from the
 * source (scripts/openapi-json.ts) and wrote among the assets at DOCUMENT_ASSET_PATH, its
 * `servers` naming the origin that serves it, as the source's handler (./document.ts) names it.
 * That build leaves the document's prose out of the modules it uploads (scripts/build-document.mjs),
 * so the document can only come from here; `npm run check:deploy` compares it with the source's.
 */
import type { Context, Handler } from "hono";
import type { AppEnv } from "../http/app-env";

/** Where the build writes the document among the assets (reached by no path of its own). */
export const DOCUMENT_ASSET_PATH = "/docs/openapi.json";

type Document = { servers: [Record<string, unknown>, ...unknown[]] };

export function documentAssetHandler(): Handler<AppEnv> {
  // Read once per isolate (the build's assets do not change while it lives); concurrent first
  // requests each read it with their own `ASSETS` call, never awaiting another's (src/lib/once.ts).
  let loaded: Document | undefined;
  const read = async (c: Context<AppEnv>): Promise<Document> => {
    const res = await c.env.ASSETS.fetch(new URL(DOCUMENT_ASSET_PATH, c.req.url));
    if (!res.ok)
      throw new Error(`the OpenAPI document is not among the assets (${res.status}): run the build`);
    return res.json();
  };
  return async (c) => {
    const document = loaded ?? (await read(c));
    loaded ??= document;
    const [server, ...others] = document.servers;
    return c.json({ ...document, servers: [{ ...server, url: new URL(c.req.url).origin }, ...others] });
  };
}
