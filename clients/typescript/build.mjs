// `npm run build` (and `npm pack`, through `prepack`): src/ → dist/ as ES modules with their
// `.d.ts`, by the TypeScript compiler alone. tsc emits no declaration file for one it did not
// compile, so the generated schema.d.ts is copied beside the index.d.ts that imports it.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json")], { stdio: "inherit" });
copyFileSync(join(here, "src", "schema.d.ts"), join(dist, "schema.d.ts"));
chmodSync(join(dist, "cli", "main.js"), 0o755);
