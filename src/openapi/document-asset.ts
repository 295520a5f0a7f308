/**
 * `GET /openapi.json` in the deployed build: the document scripts/build.mjs generated from the
 * source (scripts/openapi-json.ts) and wrote among the assets at DOCUMENT_ASSET_PATH, its
 * `servers` naming the origin that serves it, as the source's handler (./document.ts) names it.
 * That build leaves the document's prose out of the modules it uploads (scripts/build-document.mjs),
 * so the document can only come from here; `npm run check:deploy` compares it with the source's.
 */
import type { Handler } from "hono";
import type { AppEnv } from "../http/app-env";
import { buildAsset } from "../http/build-asset";

/** Where the build writes the document among the assets (reached by no path of its own). */
export const DOCUMENT_ASSET_PATH = "/docs/openapi.json";

type Document = { servers: [Record<string, unknown>, ...unknown[]] };

export function documentAssetHandler(): Handler<AppEnv> {
  const read = buildAsset<Document>(DOCUMENT_ASSET_PATH, "the OpenAPI document");
  return async (c) => {
    const document = await read(c);
    const [server, ...others] = document.servers;
    return c.json({ ...document, servers: [{ ...server, url: new URL(c.req.url).origin }, ...others] });
  };
}
