import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, type Plugin } from "vitest/config";
// @ts-expect-error: a plain .mjs build script without type declarations
import { buildDocsAssets } from "./scripts/docs-assets.mjs";

const SOURCE_MAP_COMMENT = /\n\/\/# sourceMappingURL=([^\s]+)\s*$/;

/**
 * A dependency whose published source map names sources the package does not ship (the MCP SDK's
 * maps point at its src/, standardwebhooks' at its src/ too) is loaded without that map: Vite
 * would otherwise warn once per file that the map "points to missing source files" (seventeen
 * lines in a green run), and a stack through such a file can only name its dist/ code anyway.
 * Every other file, and every map whose sources exist, is left to Vite as it is.
 */
function dependencyMapsWithoutSources(): Plugin {
  return {
    name: "dependency-maps-without-sources",
    enforce: "pre",
    load(id) {
      const file = id.split("?")[0] ?? id;
      if (!file.includes("/node_modules/") || !/\.[cm]?js$/.test(file) || !existsSync(file)) return null;
      const code = readFileSync(file, "utf8");
      const url = SOURCE_MAP_COMMENT.exec(code)?.[1];
      if (url === undefined || url.startsWith("data:")) return null;
      const mapFile = path.resolve(path.dirname(file), url);
      if (!existsSync(mapFile)) return null;
      const map = JSON.parse(readFileSync(mapFile, "utf8")) as {
        sources?: string[];
        sourcesContent?: Array<string | null>;
        sourceRoot?: string;
      };
      const root = path.resolve(path.dirname(mapFile), map.sourceRoot ?? "");
      const missing = (map.sources ?? []).some(
        (source, i) => map.sourcesContent?.[i] == null && !existsSync(path.resolve(root, source)),
      );
      return missing ? { code: code.replace(SOURCE_MAP_COMMENT, "\n"), map: null } : null;
    },
  };
}

export default defineConfig(async () => {
  // wrangler.toml's [assets] directory must exist before the Worker starts (the /docs renderer).
  await buildDocsAssets();
  // The same migrations wrangler applies (`migrations_dir`), applied by test/setup.ts.
  const migrations = await readD1Migrations(path.resolve("migrations"));
  return {
    // The Worker's zod entry (wrangler.toml [alias], src/lib/zod/index.ts), so the tests run the
    // zod the bundle runs. Only the bare specifier: `zod/v4` is zod's whole entry, same modules.
    resolve: { alias: [{ find: /^zod$/, replacement: path.resolve("src/lib/zod/index.ts") }] },
    plugins: [
      dependencyMapsWithoutSources(),
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            VARIABLES_KEY: "dGVzdC12YXJpYWJsZXMta2V5LTMyLWJ5dGVzLWxvbmc=",
            ALLOW_INSECURE_WEBHOOKS: "false",
            // The tests' own OpenID Connect issuer is an http:// server on this machine
            // (test/global-setup-receiver.ts); the production rule is tested by turning it off.
            ALLOW_INSECURE_OIDC_ISSUERS: "true",
            // Both organization databases exist (wrangler.toml ORG_DATABASES); new organizations go to
            // DB unless created in another by name (test/helpers/databases.ts), so the tests that read
            // rows through env.DB find them, and the tests of the split choose their database.
            // `NEW_ORG_DATABASES=DB_ORG_2 npx vitest run test/routes` runs the route tests with every
            // organization in the second database (docs/development.md, "Tests and benchmarks").
            ORG_DATABASES: "DB,DB_ORG_2",
            NEW_ORG_DATABASES: process.env.NEW_ORG_DATABASES || "DB",
            // An audit stream's retries after a failed attempt (API_CONTRACT §30: about 1 s, 5 s, 30 s,
            // then every 60 s), shortened so that a test of a failing receiver takes moments
            // (src/audit-stream/object.ts); the schedule itself is tested as a pure function.
            AUDIT_STREAM_RETRY_MS: "200,400,600,800",
            // How long a switched move waits before it cleans up its old database (35 s deployed:
            // src/org-move/object.ts); the tests run in one isolate, whose caches the move clears.
            MOVE_SETTLE_MS: "200",
            // The first retry of a failing move's run (500 ms deployed, doubling): a move that keeps
            // failing fails in moments here.
            MOVE_RETRY_MS: "20",
            // No pause between a move's steps (deployed: as long as the step took, ≤ 200 ms).
            MOVE_PACE: "0",
            // test/properties/fuzz-openapi.test.ts: a longer local run (`FUZZ_RUNS=300 npx vitest run …`).
            FUZZ_RUNS: process.env.FUZZ_RUNS ?? "",
            FUZZ_SEED: process.env.FUZZ_SEED ?? "",
            // Read through the service context's config: the test suite's requests share a client
            // IP and reuse keys, so every limit is raised here. The rate-limit tests themselves run
            // with the production numbers (test/helpers/api.ts PRODUCTION_LIMITS).
            RATE_LIMITS: JSON.stringify({
              default: 1_000_000,
              reveal: 1_000_000,
              "orgs-create": 1_000_000,
              "keys-create": 1_000_000,
              anonymous: 1_000_000,
              "oidc-exchange": 1_000_000,
            }),
          },
        },
      }),
    ],
    test: {
      // Runtimes shared by test files instead of a new one per file: the per-file start-up
      // was ~60 % of the run (190 of 310 s). Tests therefore never rely on an empty database or
      // global row counts (each works in the organization it creates), and test/setup.ts cleans
      // up what would otherwise outlive its file.
      isolate: false,
      // Three runtimes side by side, each running whole files in turn with its own storage. The
      // suite mostly waits (timers, streams, the receiver): alone it used 0.7 of one core, and on
      // this 2-core machine 3 runtimes took the run from 264 s to 138 s (4 gave nothing more).
      // Vitest's default here is one fewer than the cores, which is one.
      maxWorkers: 3,
      setupFiles: ["./test/setup.ts"],
      globalSetup: ["./test/global-setup-receiver.ts", "./test/global-setup-issuer.ts"],
      include: ["test/**/*.test.ts"],
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  };
});
