/**
 * The published document's three paths. What serves them (./document.ts: every operation's
 * definition, the shared components, the docs page) is loaded on the first request for one of
 * them, not when the Worker starts (issue #46).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Handler } from "hono";
import type { AppEnv } from "../http/app-env";
import type { Operation } from "../http/operations";

/** The Scalar API reference's browser bundle, copied from the npm package by scripts/docs-assets.mjs. */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";

const DOCUMENT_PATHS = ["/openapi.json", "/docs", DOCS_RENDERER_PATH] as const;
export type DocumentPath = (typeof DOCUMENT_PATHS)[number];

export function registerDocumentRoutes(app: OpenAPIHono<AppEnv>, operations: readonly Operation[]): void {
  let handlers: Promise<Record<DocumentPath, Handler<AppEnv>>> | undefined;
  const load = () => {
    handlers ??= import("./document").then((m) => m.documentHandlers(operations));
    handlers.catch(() => {
      handlers = undefined;
    });
    return handlers;
  };
  for (const path of DOCUMENT_PATHS) app.get(path, async (c, next) => (await load())[path](c, next));
}
