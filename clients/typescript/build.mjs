// `npm run build` (and `npm pack`, through `prepack`): src/ → dist/ as ES modules with their
// `.d.ts`, by the TypeScript compiler alone: TypeScript 7's (devDependency `typescript-7`), the
// native one, ~3 times less CPU than 5's for the same files byte for byte. The package's own
// `typescript` stays 5: openapi-typescript (`npm run generate`) needs its JavaScript API, which 7
// does not have, and the client type-checks with it (scripts/check-client.mjs), as do the packed
// package's consumers in scripts/check-cli.mjs. tsc emits no declaration file for one it did not
// compile, so the generated schema.d.ts is copied beside the index.d.ts that imports it.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
// Its package exports no `bin/tsc`: the path is its package.json's `bin`.
const typescript7 = createRequire(import.meta.url).resolve("typescript-7/package.json");
const tsc = join(dirname(typescript7), JSON.parse(readFileSync(typescript7, "utf8")).bin.tsc);
// One checker (TypeScript 7 runs 4 in parallel by default): the same wall time for these files and
// about 40 % less CPU, which `npm test` (four check groups on two cores) runs short of.
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json"), "--checkers", "1"], {
  stdio: "inherit",
});
copyFileSync(join(here, "src", "schema.d.ts"), join(dist, "schema.d.ts"));
chmodSync(join(dist, "cli", "main.js"), 0o755);
