/**
 * The published document's three paths. What serves them (./document.ts: every operation's
 * definition, the shared components; ./pages.ts: the docs page) is loaded on the first request for
 * one of them, not when the Worker starts.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Handler } from "hono";
import type { AppEnv } from "../http/app-env";
import type { Operation } from "../http/operations";
import { loadedOnce } from "../lib/once";

/**
 * The Scalar API reference's browser bundle, copied from the npm package, and the /docs page that
 * loads it, rendered from the package at build time: static assets scripts/docs-assets.mjs writes
 * at its DOCS_RENDERER_PATH and DOCS_PAGE_PATH (test/properties/openapi/docs.test.ts reads both).
 */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";
export const DOCS_PAGE_PATH = "/docs/page.html";

const DOCUMENT_PATHS = {
  "/openapi.json": "document",
  "/docs": "docs",
  [DOCS_RENDERER_PATH]: "renderer",
} as const;

declare global {
  /**
   * `true` in the deployed build only (scripts/build.mjs `define`), which leaves the document's
   * prose out of its modules and writes the document among its assets: `/openapi.json` is then
   * that document (./document-asset.ts), and ./document.ts is in no module it uploads.
   */
  var __DOCUMENT_FROM_BUILD__: true | undefined;
}

export function registerDocumentRoutes(app: OpenAPIHono<AppEnv>, operations: readonly Operation[]): void {
  // Loaded once per isolate; concurrent first requests each load it (src/lib/once.ts `loadedOnce`).
  const load = loadedOnce(
    async (): Promise<Record<(typeof DOCUMENT_PATHS)[keyof typeof DOCUMENT_PATHS], Handler<AppEnv>>> => ({
      ...(await import("./pages")).pageHandlers(DOCS_PAGE_PATH),
      document: globalThis.__DOCUMENT_FROM_BUILD__
        ? (await import("./document-asset")).documentAssetHandler()
        : (await import("./document")).documentHandler(operations),
    }),
  );
  for (const [path, name] of Object.entries(DOCUMENT_PATHS)) {
    app.get(path, async (c, next) => (await load())[name](c, next));
  }
}
