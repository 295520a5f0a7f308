// `npm run build` (and `npm pack`, through `prepack`): src/ → dist/ as ES modules with their
// `.d.ts`, by the TypeScript compiler (the bin then bundled by esbuild, below): TypeScript 7's
// (devDependency `typescript-7`), the native one, ~3 times less CPU than 5's for the same files
// byte for byte. The package's own `typescript` stays 5: openapi-typescript (`npm run generate`)
// needs its JavaScript API, which 7 does not have, and the client type-checks with it
// (scripts/check-client.mjs), as do the packed package's consumers in scripts/check-cli.mjs. tsc
// emits no declaration file for one it did not compile, so the generated schema.d.ts is copied
// beside the index.d.ts that imports it.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const dist = join(here, "dist");
rmSync(dist, { recursive: true, force: true });
// Its package exports no `bin/tsc`: the path is its package.json's `bin`.
const typescript7 = require.resolve("typescript-7/package.json");
const tsc = join(dirname(typescript7), JSON.parse(readFileSync(typescript7, "utf8")).bin.tsc);
// One checker (TypeScript 7 runs 4 in parallel by default): the same wall time for these files and
// about 40 % less CPU, which `npm test` (four check groups on two cores) runs short of.
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json"), "--checkers", "1"], {
  stdio: "inherit",
});
copyFileSync(join(here, "src", "schema.d.ts"), join(dist, "schema.d.ts"));

// The `deploy-platform` bin as ONE module: what tsc emitted for src/cli/ and the dependencies it
// imports (yargs and its own, openapi-fetch), bundled by esbuild into dist/cli/main.js. Each call
// of the CLI starts a new Node, and finding, reading and compiling about 50 modules was a sixth
// of what a call cost ("The CLI's start" in bench/README.md). The library (dist/index.js) stays
// tsc's modules, importing openapi-fetch as a dependency; yargs is no dependency of the package.
// yargs finds its translations (`Kommandos:` under LC_ALL=de_DE.UTF-8) beside its own module;
// bundled, they are copied to dist/cli/locales/ and its path to them points there.
const cli = join(dist, "cli");
const yargsDir = dirname(require.resolve("yargs/package.json"));
const YARGS_LOCALES = "'../../../locales'";
await build({
  entryPoints: [join(cli, "main.js")],
  outfile: join(cli, "main.js"),
  allowOverwrite: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.19",
  legalComments: "inline",
  logLevel: "warning",
  plugins: [
    {
      name: "yargs-locales",
      setup(build) {
        build.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => {
          const code = readFileSync(args.path, "utf8");
          // resolve(<this module's file>, '../../../locales'): yargs/locales from its shim, and
          // dist/cli/locales from the bundle with '../locales'.
          if (!code.includes(YARGS_LOCALES))
            throw new Error(
              `${args.path} no longer names ${YARGS_LOCALES}: see clients/typescript/build.mjs`,
            );
          return { contents: code.replace(YARGS_LOCALES, "'../locales'"), loader: "js" };
        });
      },
    },
  ],
});
for (const file of readdirSync(cli)) if (file !== "main.js") rmSync(join(cli, file));
cpSync(join(yargsDir, "locales"), join(cli, "locales"), { recursive: true });
chmodSync(join(cli, "main.js"), 0o755);
