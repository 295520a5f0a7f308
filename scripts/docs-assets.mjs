#!/usr/bin/env node
// The /docs page and its renderer, served by the Worker from its own static assets (wrangler.toml
// [assets]), written into dist/assets/docs/ (git-ignored): the Scalar API reference's standalone
// browser bundle, copied from the npm package, and the page that loads it, rendered here by the
// package's Hono middleware from DOCS_PAGE (a page that never changes while a build runs: made
// once here, not by the Worker, which then ships neither the middleware nor its theme). Run by
// wrangler's [build] step (`npm run dev`, `wrangler deploy`), scripts/build.mjs and
// vitest.config.ts (`npm test`), so the files exist before they are needed.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DOCS_ASSETS_DIR = join(root, "dist", "assets");

/** The renderer's path, and the page's (which src/openapi/document.ts reads from ASSETS for `/docs`). */
export const DOCS_RENDERER_PATH = "/docs/scalar-api-reference.js";
export const DOCS_PAGE_PATH = "/docs/page.html";
/** The OpenAPI document the deployed build serves (scripts/build.mjs `buildDocumentAsset`). */
export const DOCUMENT_ASSET_PATH = "/docs/openapi.json";
/** The MCP server's `tools/list` answer the deployed build serves (src/mcp/tool-list.ts). */
export const TOOL_LIST_ASSET_PATH = "/docs/mcp-tools.json";

/** The page: its document is this origin's `/openapi.json`, its renderer this origin's copy. */
const DOCS_PAGE = {
  url: "/openapi.json",
  pageTitle: "Deployment Platform API",
  cdn: DOCS_RENDERER_PATH,
  withDefaultFonts: false,
  // The "Ask AI" agent calls Scalar's servers: off, so the page makes no foreign request.
  agent: { disabled: true },
  // Its developer toolbar offers to upload the document to Scalar's registry: never shown.
  showDeveloperTools: "never",
};

/** Writes `contents` to `target` unless it holds them already (a dev server watching sees no change). */
function writeIfChanged(target, contents) {
  mkdirSync(dirname(target), { recursive: true });
  try {
    if (readFileSync(target).equals(contents)) return;
  } catch {}
  writeFileSync(target, contents);
}

export async function buildDocsAssets() {
  const page = await new Hono().get("/", Scalar(DOCS_PAGE)).request("/");
  if (page.status !== 200) throw new Error(`the /docs page did not render: ${page.status}`);
  writeIfChanged(join(DOCS_ASSETS_DIR, DOCS_PAGE_PATH), Buffer.from(await page.text()));
  const require = createRequire(join(root, "package.json"));
  // The package exports no ./package.json: find its directory from its main entry.
  let pkgDir = dirname(require.resolve("@scalar/api-reference"));
  while (!existsSync(join(pkgDir, "package.json"))) pkgDir = dirname(pkgDir);
  const source = join(pkgDir, "dist", "browser", "standalone.js");
  const target = join(DOCS_ASSETS_DIR, DOCS_RENDERER_PATH);
  writeIfChanged(target, readFileSync(source));
  return target;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await buildDocsAssets();
