#!/usr/bin/env node
// The /docs page's renderer, served by the Worker's own static assets (wrangler.toml [assets]):
// copies the Scalar API reference's standalone browser bundle from the npm package into
// dist/assets/docs/ (git-ignored). Run by wrangler's [build] step (`npm run dev`, `wrangler
// deploy`) and by vitest.config.ts (`npm test`), so the files exist before they are needed.
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DOCS_ASSETS_DIR = join(root, "dist", "assets");

export function buildDocsAssets() {
  const require = createRequire(join(root, "package.json"));
  // The package exports no ./package.json: find its directory from its main entry.
  let pkgDir = dirname(require.resolve("@scalar/api-reference"));
  while (!existsSync(join(pkgDir, "package.json"))) pkgDir = dirname(pkgDir);
  const source = join(pkgDir, "dist", "browser", "standalone.js");
  const target = join(DOCS_ASSETS_DIR, "docs", "scalar-api-reference.js");
  mkdirSync(dirname(target), { recursive: true });
  let same = false;
  try {
    same =
      statSync(target).size === statSync(source).size && readFileSync(target).equals(readFileSync(source));
  } catch {}
  if (!same) copyFileSync(source, target);
  return target;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) buildDocsAssets();
