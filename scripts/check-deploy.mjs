#!/usr/bin/env node
// Every deployed environment of wrangler.toml (`[env.<name>]`, docs/deploy.md).
//
// `npm run check:deploy` (part of `npm test`): for each environment,
//   - its bindings are the local configuration's, under the contract's names (API_CONTRACT §1):
//     DB, RATE_LIMITER, EVENTS, the queue consumers with the same settings, the same var names,
//     and ALLOW_INSECURE_WEBHOOKS and ALLOW_INSECURE_OIDC_ISSUERS "false";
//   - its Durable Object migrations are the local ones (inherited: each new class is created in
//     every environment by the same tag);
//   - docs/deploy.md's table names what wrangler.toml configures: every Durable Object binding
//     and class, every queue and its producer binding, every cron and every migration tag;
//   - it is built by scripts/build.mjs (code splitting) into a directory of its own, which wrangler
//     uploads as it is (`no_bundle`, every module found, source maps), weighing at most
//     MAX_UPLOAD_GZIP_KIB gzip (the figure printed);
//   - `wrangler deploy --dry-run --env <name> --secrets-file <file>` builds it (its build, assets,
//     bindings; nothing is uploaded) as the deploy workflow deploys it, with a secrets file that
//     scripts/deploy-secrets.mjs wrote from made-up values, one environment after the other; the
//     modules it would upload are exactly that build's (no chunk of an earlier build);
//   - what a new isolate of that build evaluates before its first request (the modules the entry
//     reaches by static imports, from the build's esbuild metafile) holds no route module, no
//     record schema, no part of the OpenAPI document and no part of the MCP server: those are
//     loaded on first use (src/http/operations.ts, src/openapi/routes.ts, src/mcp/server.ts), and
//     one static import would bring them all back into every start; nor any module of the heavy
//     packages only some operations use (HEAVY_PACKAGES: `jose`, the OpenID Connect exchange's),
//     which every new isolate would evaluate;
//   - no read (GET) operation's module reaches a `*-writes.ts` module (the schemas of request
//     bodies, kept apart from the records so that a first read builds none of them);
//   - the build holds no module of the MCP SDK: a devDependency (the tests' client), not the
//     Worker's, whose server is src/mcp/transport.ts (26 KiB gzip less for every isolate to
//     compile).
//   - served locally (`npm run dev -- --env staging`: the staging build, migrated and seeded;
//     scripts/check-deploy-served.mjs), it serves the same /openapi.json as the source
//     (scripts/openapi-json.ts), the document the build wrote among its assets (whose own path is
//     404), while its modules hold none of the document's operation and response texts
//     (scripts/build-document.mjs left them out, and its rules are checked on a module made for
//     them); one request to each operation (src/routes/index.ts), the demo key's (or the admin
//     token's), answers below 500; both crons run (wrangler's /cdn-cgi/handler/scheduled), and an
//     event reaches a webhook receiver here, signed (the queue consumer and a delivery lane, each
//     loaded on first use).
//
// `node scripts/check-deploy.mjs --ready <name>` (the deploy workflow, before it touches the
// account): refuses an environment whose D1 database_id is still the placeholder.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { asWranglerBuilds } from "./build.mjs";
import { walkServedBuild } from "./check-deploy-served.mjs";
import { deploySecrets } from "./deploy-secrets.mjs";
import { buildDocsAssets } from "./docs-assets.mjs";
import { checker, sameJson } from "./lib/check.mjs";
import { DRIZZLE_UNUSED_MODULES } from "./lib/drizzle-stand-ins.mjs";
import { environments, isPlaceholderId, readEnvironment as read, wrangler } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages the tests use and the Worker must not bundle, by their path in node_modules. */
const DEV_ONLY = /node_modules\/@modelcontextprotocol\//;
/**
 * The most a deployed environment's upload may weigh, in KiB gzip as wrangler reports it ("Total
 * Upload: … / gzip: …", every module gzipped together): issue #46's and #80's goal (the order
 * wrangler reads the modules in, the file system's, moves the figure by a few tenths). It came
 * down to it from 247.08 with the /docs page rendered at build time, then the OpenAPI document's
 * prose left out of the modules (scripts/build-document.mjs, the document an asset), 225.77,
 * zod-to-openapi's generators, 219.63, and zod's unused schema kinds, 207.77, drizzle-orm's
 * Postgres columns, 207.13, a project's reads apart from its writes with the shared headers' prose
 * out, 205.79, zod's JSON Schema conversion (the MCP tools' list an asset), 198.61, and the tools'
 * titles and descriptions, 196.55 (196.63 with one reader of the assets); part five took it to
 * 199.84, and drizzle-orm's methods src/ never calls back to 196.88. Each step: bench/README.md,
 * "Bundle".
 */
const MAX_UPLOAD_GZIP_KIB = 200;
/** The most zod may weigh in a deployed build, raw bytes as esbuild's metafile counts them. */
const MAX_ZOD_BYTES = 90_000;
/**
 * The most drizzle-orm may weigh in a deployed build, raw bytes as esbuild's metafile counts them:
 * 65.1 KB with the code of the methods src/ never calls, 56.0 without
 * (scripts/lib/drizzle-stand-ins.mjs).
 */
const MAX_DRIZZLE_BYTES = 58_000;
/** zod's JSON Schema conversion, which the deployed build stands in for (scripts/build-document.mjs). */
const JSON_SCHEMA_MODULES = ["zod/v4/core/to-json-schema.js", "zod/v4/core/json-schema-processors.js"];
/** Modules only writes need (their audit entry, prebuilt inserts, the deployments they follow). */
const WRITES_ONLY = [
  "src/services/audit/entry.ts",
  "src/db/compiled-inserts.ts",
  "src/services/deployments/timeline.ts",
];
/** Packages that only some operations use, which must never be part of a new isolate's start. */
const HEAVY_PACKAGES = ["jose"];
/** A module of one of HEAVY_PACKAGES (esbuild names it by its path under node_modules). */
const heavyModule = (path) =>
  HEAVY_PACKAGES.some((name) => new RegExp(`(^|/)node_modules/${name}/`).test(path));

const args = process.argv.slice(2);
if (args[0] === "--ready") {
  const env = args[1];
  if (!environments().includes(env)) {
    console.error(`wrangler.toml has no [env.${env}] (it has: ${environments().join(", ")})`);
    process.exit(1);
  }
  const ids = read(env).d1_databases.map((d) => d.database_id);
  if (ids.length === 0 || ids.some((id) => !id || isPlaceholderId(id))) {
    console.error(
      `[env.${env}] in wrangler.toml still has a placeholder D1 database_id: create each database in ` +
        `this environment's account (\`npx wrangler d1 create <database_name>\`), put the id it prints ` +
        `into its [[env.${env}.d1_databases]] and commit it (docs/deploy.md).`,
    );
    process.exit(1);
  }
  console.log(`[env.${env}]: D1 database ${ids.join(", ")}`);
  process.exit(0);
}

const { check, fail, done } = checker("check:deploy");

const local = read(undefined);
/** Bindings in name order: where each stands in wrangler.toml says nothing. */
const byName = (bindings) => [...bindings].sort((a, b) => a.name.localeCompare(b.name));
const names = environments();
check(
  names.includes("staging") && names.includes("production"),
  `environments: ${names.join(", ") || "none"}`,
);
for (const env of names) {
  const c = read(env);
  check(
    sameJson(
      c.d1_databases.map((d) => [d.binding, d.database_name, d.migrations_dir]),
      local.d1_databases.map((d) => [d.binding, d.database_name, d.migrations_dir]),
    ),
    `[env.${env}] D1: ${c.d1_databases.map((d) => `${d.binding} → ${d.database_name}`).join(", ")}`,
  );
  // Every organization database ORG_DATABASES names is a D1 binding of the environment (an unbound
  // one would fail its organizations' requests), and new organizations go only to those.
  const d1 = new Set(c.d1_databases.map((d) => d.binding));
  const listed = (name) =>
    (c.vars[name] ?? "DB")
      .split(",")
      .map((b) => b.trim())
      .filter(Boolean);
  const unbound = [...listed("ORG_DATABASES"), ...listed("NEW_ORG_DATABASES")].filter((b) => !d1.has(b));
  check(
    unbound.length === 0 && d1.has("DB"),
    `[env.${env}] ORG_DATABASES (${listed("ORG_DATABASES").join(", ")}) are D1 bindings, DB (the directory) among them`,
    `not bound: ${unbound.join(", ")}`,
  );
  check(
    sameJson(byName(c.durable_objects.bindings), byName(local.durable_objects.bindings)),
    `[env.${env}] Durable Object: ${c.durable_objects.bindings.map((b) => `${b.name} → ${b.class_name}`).join(", ")}`,
  );
  check(
    sameJson(c.queues, local.queues),
    `[env.${env}] queues: ${c.queues.producers.map((p) => `${p.binding} → ${p.queue}`).join(", ")}; consumers ${c.queues.consumers.map((q) => q.queue).join(", ")} as locally`,
    JSON.stringify(c.queues),
  );
  check(
    sameJson(Object.keys(c.vars).sort(), Object.keys(local.vars).sort()) &&
      c.vars.ALLOW_INSECURE_WEBHOOKS === "false",
    `[env.${env}] vars: ${JSON.stringify(c.vars)}`,
  );
  // API_CONTRACT §1, §27: an http:// or loopback OpenID Connect issuer is for local issuers only; a
  // deployed environment that trusted one would take keys vouched for over plain HTTP.
  // The deployed build (scripts/build.mjs), not wrangler's one bundle: in its own directory, so
  // that two environments' builds never write the same files.
  const outdir = join(root, "dist", env);
  check(
    c.main === join(outdir, "index.js") &&
      c.no_bundle === true &&
      c.find_additional_modules === true &&
      c.base_dir === outdir &&
      c.build?.command === `node scripts/build.mjs dist/${env}` &&
      c.upload_source_maps === true &&
      sameJson(c.rules, [{ type: "ESModule", globs: ["**/*.js"] }]),
    `[env.${env}] is scripts/build.mjs's code-split build in dist/${env}, uploaded as its modules`,
    JSON.stringify({ main: c.main, no_bundle: c.no_bundle, base_dir: c.base_dir, build: c.build }),
  );
  check(
    c.vars.ALLOW_INSECURE_OIDC_ISSUERS === "false",
    `[env.${env}] ALLOW_INSECURE_OIDC_ISSUERS is "false"`,
    `it is ${JSON.stringify(c.vars.ALLOW_INSECURE_OIDC_ISSUERS ?? null)}`,
  );
  check(
    sameJson(c.triggers, local.triggers) && c.assets?.directory === local.assets?.directory,
    `[env.${env}] crons and assets as locally`,
  );
  check(
    sameJson(c.migrations, local.migrations),
    `[env.${env}] Durable Object migrations: ${c.migrations.map((m) => m.tag).join(", ")}`,
    JSON.stringify(c.migrations),
  );
}

// The deployed build bundles as `npm run dev`'s wrangler does (wrangler.toml's top level), so that
// the two run the same code: the options scripts/build.mjs gives esbuild, beside wrangler's.
{
  const options = asWranglerBuilds(root);
  const aliases = Object.fromEntries(
    Object.entries(local.alias ?? {}).map(([k, v]) => [k, resolve(root, v)]),
  );
  check(
    options.minify === local.minify &&
      options.keepNames === (local.keep_names ?? true) &&
      sameJson(options.alias, aliases),
    "scripts/build.mjs bundles with wrangler.toml's minify, keep_names and [alias]",
    JSON.stringify({
      build: options,
      wrangler: { minify: local.minify, keep_names: local.keep_names, aliases },
    }),
  );
}

// What an operator reads must be what wrangler.toml deploys (each environment has the local
// bindings, checked above).
{
  const doc = readFileSync(join(root, "docs", "deploy.md"), "utf8");
  const named = [
    ...local.durable_objects.bindings.flatMap((b) => [b.name, b.class_name]),
    ...local.queues.producers.flatMap((p) => [p.binding, p.queue]),
    ...local.queues.consumers.map((q) => q.queue),
    ...local.triggers.crons,
    ...local.migrations.flatMap((m) => [m.tag, ...(m.new_sqlite_classes ?? []), ...(m.new_classes ?? [])]),
  ];
  const missing = [...new Set(named)].filter((name) => !doc.includes(`\`${name}\``));
  check(
    missing.length === 0,
    `docs/deploy.md names every Durable Object, queue, cron and migration tag of wrangler.toml (${new Set(named).size})`,
    `missing: ${missing.join(", ")}`,
  );
}

// The [build] step writes dist/assets; run it once here rather than in several builds at once.
await buildDocsAssets();
const run = promisify(execFile);
const out = mkdtempSync(join(tmpdir(), "check-deploy-"));
try {
  const { secrets, problems } = deploySecrets({
    ADMIN_TOKEN: randomBytes(24).toString("base64url"),
    VARIABLES_KEY: randomBytes(32).toString("base64"),
  });
  check(problems.length === 0, "scripts/deploy-secrets.mjs accepts well-formed secrets", problems.join("; "));
  check(
    deploySecrets({ ADMIN_TOKEN: "short", VARIABLES_KEY: "not-a-key" }).problems.length === 2 &&
      deploySecrets({}).problems.length === 2,
    "scripts/deploy-secrets.mjs refuses missing and malformed ones",
  );
  const secretsFile = join(out, "secrets.json");
  writeFileSync(secretsFile, JSON.stringify(secrets), { mode: 0o600 });
  // One after the other: a server of the staging build may be reading dist/staging meanwhile, but
  // no two builds of one environment run at once here.
  const results = [];
  for (const env of names) {
    results.push(
      await run(
        wrangler,
        ["deploy", "--dry-run", "--env", env, "--secrets-file", secretsFile, "--outdir", join(out, env)],
        {
          cwd: root,
          // node_modules/.bin first, as under npm: wrangler runs on the project's Node.
          env: {
            ...process.env,
            PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH}`,
            WRANGLER_SEND_METRICS: "false",
            CI: "true",
          },
        },
      ).then(
        ({ stdout }) => ({ env, ok: true, stdout }),
        (err) => ({ env, ok: false, stdout: `${err.stdout ?? ""}${err.stderr ?? ""}` }),
      ),
    );
  }
  for (const { env, ok, stdout } of results) {
    const size = /Total Upload: ([^\n]+)/.exec(stdout)?.[1];
    check(
      ok &&
        stdout.includes("--dry-run: exiting now.") &&
        /env\.ADMIN_TOKEN\b/.test(stdout) &&
        /env\.VARIABLES_KEY\b/.test(stdout),
      `wrangler deploy --dry-run --env ${env} builds${size ? ` (${size})` : ""}`,
      `\n${stdout}`,
    );
    const gzip = Number(/ gzip: ([\d.]+) KiB/.exec(size ?? "")?.[1]);
    check(
      gzip <= MAX_UPLOAD_GZIP_KIB,
      `${env}: the upload is ${gzip} KiB gzip, at most ${MAX_UPLOAD_GZIP_KIB} (issues #46 and #80)`,
      `over the bound by ${(gzip - MAX_UPLOAD_GZIP_KIB).toFixed(2)} KiB: bench/README.md, "Bundle", names what weighs`,
    );
    if (ok) {
      const meta = JSON.parse(readFileSync(join(root, "dist", env, "meta.json"), "utf8"));
      const built = Object.keys(meta.outputs)
        .filter((path) => path.endsWith(".js"))
        .map((path) => basename(path))
        .sort();
      const uploaded = readdirSync(join(out, env))
        .filter((name) => name.endsWith(".js"))
        .sort();
      check(
        built.length > 1 && sameJson(uploaded, built),
        `${env}: the upload is the build's ${built.length} modules (the entry and its chunks), nothing else`,
        `built ${built.length}, uploaded ${uploaded.length}: ${uploaded.filter((m) => !built.includes(m)).join(", ")}`,
      );
      const generator = Object.keys(meta.inputs).filter(
        (path) => path.includes("zod-to-openapi") || path.startsWith("document-generator:"),
      );
      const bytesOf = (dir) =>
        Object.values(meta.outputs)
          .flatMap((output) => Object.entries(output.inputs ?? {}))
          .filter(([path]) => path.includes(`node_modules/${dir}/`))
          .reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
      const generatorBytes = bytesOf("@asteasolutions/zod-to-openapi");
      check(
        generator.some((path) => path.startsWith("document-generator:")) && generatorBytes < 10_000,
        `${env}: the build holds zod-to-openapi's registry, not its generators (${generatorBytes} bytes of it; its document is an asset)`,
        generator.join(", "),
      );
      // zod's namespace object, once made, keeps every schema kind: 137.7 KB of zod then, 102.5
      // without it (scripts/build-document.mjs, biome.json's rule on importing `z` by name), 81.7
      // without the JSON Schema conversion too.
      const zodBytes = bytesOf("zod");
      check(
        zodBytes < MAX_ZOD_BYTES,
        `${env}: the build keeps only the zod schema kinds the API uses (${zodBytes} bytes of zod, under ${MAX_ZOD_BYTES}: zod's namespace object is never made)`,
        "something hands zod's whole namespace on (an `import { z }` by name, or @hono/zod-openapi's `extendZodWithOpenApi(z)` as it is), or its JSON Schema conversion is back (below)",
      );
      const conversionBytes = JSON_SCHEMA_MODULES.map((module) =>
        Object.values(meta.outputs)
          .map((output) => output.inputs?.[`node_modules/${module}`]?.bytesInOutput ?? 0)
          .reduce((sum, bytes) => sum + bytes, 0),
      );
      // src/mcp/portable-schema.ts is what only the list made from the schemas calls.
      const converts = Object.values(meta.outputs).some(
        (output) => (output.inputs?.["src/mcp/portable-schema.ts"]?.bytesInOutput ?? 0) > 0,
      );
      check(
        conversionBytes.every((bytes) => bytes < 1_000) && !converts,
        `${env}: the build holds none of zod's JSON Schema conversion (${conversionBytes.join(" and ")} bytes of its two modules: stand-ins that throw, the MCP tools' list an asset), nor the tools' list made from the schemas`,
        converts
          ? "src/mcp/tool-list.ts's making of the list is in the build: `__DOCUMENT_FROM_BUILD__` no longer leaves it out"
          : "scripts/build-document.mjs `jsonSchemaStubPlugin` no longer stands in for them",
      );
      const postgresBytes = bytesOf("drizzle-orm/pg-core");
      check(
        postgresBytes < 1_000,
        `${env}: the build holds none of drizzle-orm's Postgres columns (${postgresBytes} bytes of pg-core: \`isPgEnum\` alone, scripts/lib/drizzle-stand-ins.mjs)`,
        "drizzle-orm/sql/sql.js's import of pg-core/columns/enum.js is the package's own again",
      );
      const drizzleBytes = bytesOf("drizzle-orm");
      const standIns = DRIZZLE_UNUSED_MODULES.map((module) =>
        Object.values(meta.outputs)
          .flatMap((output) => Object.entries(output.inputs ?? {}))
          .filter(([path]) => path.endsWith(`node_modules/drizzle-orm/${module}`))
          .reduce((sum, [, input]) => sum + input.bytesInOutput, 0),
      );
      check(
        drizzleBytes < MAX_DRIZZLE_BYTES && standIns.every((bytes) => bytes < 300),
        `${env}: the build holds none of drizzle-orm's relational queries, $count, with, transactions or migrator (${drizzleBytes} bytes of drizzle-orm, under ${MAX_DRIZZLE_BYTES}; ${standIns.join(", ")} bytes of its ${standIns.length} modules for them: stand-ins that throw)`,
        "scripts/lib/drizzle-stand-ins.mjs `drizzleUnusedPlugin` no longer stands in for them",
      );
      const { eager, deferred, heavy } = startupModules(meta.inputs, "src/index.ts");
      check(
        heavy.length === 0,
        `${env}: a new isolate evaluates no module of ${HEAVY_PACKAGES.join(" or ")} before its first request`,
        `${heavy.length} reached by static imports from src/index.ts, among them ${heavy.slice(0, 5).join(", ")}`,
      );
      check(
        eager.length === 0 && deferred > 0,
        `${env}: a new isolate evaluates no route, record schema, document or MCP module before its first request ` +
          `(${deferred} loaded on first use)`,
        `reached by static imports from src/index.ts: ${eager.join(", ")}`,
      );
      const reads = readsBuildingBodies(meta.inputs);
      check(
        reads.offenders.length === 0,
        `${env}: no read (GET) operation builds a request body: none of the ${reads.count} reaches a \`*-writes.ts\` module`,
        reads.offenders.join("\n"),
      );
      // The read bench/first-instructions.mjs measures (issue #80's cold read): its operation's
      // first request evaluates no module only a write needs (src/services/projects/reads.ts).
      const started = reachedFrom(meta.inputs, "src/index.ts");
      const projectRead = [...reachedFrom(meta.inputs, "src/routes/projects/_read.ts")].filter(
        (path) => !started.has(path) && WRITES_ONLY.includes(path),
      );
      check(
        projectRead.length === 0,
        `${env}: a project's first read evaluates none of a write's modules (${WRITES_ONLY.join(", ")})`,
        `reached from src/routes/projects/_read.ts: ${projectRead.join(", ")}`,
      );
      const devOnly = Object.keys(meta.inputs).filter((path) => DEV_ONLY.test(path));
      check(
        devOnly.length === 0,
        `${env}: the bundle holds no module of the MCP SDK (the tests' client, not the Worker's)`,
        `bundled: ${devOnly.join(", ")}`,
      );
    }
  }
  if (results.find((r) => r.env === "staging")?.ok) await walkServedBuild(out, { check, fail });
} finally {
  rmSync(out, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * The read operations (`get`, from src/routes/index.ts) whose module reaches, by static imports, a
 * `*-writes.ts` module: the schemas of request bodies (and what only writes answer) are kept apart
 * from the records (src/schemas/*-writes.ts, src/routes/variables/set-writes.ts), so that a new
 * isolate's first read builds none of them (bench/earlier-figures.md, "Building an operation").
 */
function readsBuildingBodies(inputs) {
  const index = readFileSync(join(root, "src", "routes", "index.ts"), "utf8");
  const reads = [...index.matchAll(/op\("get", "([^"]+)", \(\) => import\("\.\/([^"]+)"\)/g)].map(
    ([, path, module]) => ({ path, module: `src/routes/${module}.ts` }),
  );
  const offenders = [];
  for (const { path, module } of reads) {
    if (!inputs[module]) {
      offenders.push(`GET ${path}: ${module} is not in the bundle`);
      continue;
    }
    const bodies = [...reachedFrom(inputs, module)].filter((file) => file.endsWith("-writes.ts"));
    if (bodies.length > 0) offenders.push(`GET ${path} (${module}) reaches ${bodies.join(", ")}`);
  }
  return { count: reads.length, offenders };
}

/** The modules `entry` evaluates: itself and what it reaches by static imports. */
function reachedFrom(inputs, entry) {
  const reached = new Set([entry]);
  for (const path of reached) {
    for (const edge of inputs[path]?.imports ?? []) {
      if (edge.kind === "import-statement" && !edge.external) reached.add(edge.path);
    }
  }
  return reached;
}

/**
 * The modules that must wait for first use but that the entry reaches by static imports (`eager`),
 * how many of them the bundle holds behind a dynamic import (`deferred`), and the modules of
 * HEAVY_PACKAGES the entry reaches by static imports (`heavy`).
 */
function startupModules(inputs, entry) {
  const deferredKind = (path) =>
    (path.startsWith("src/routes/") && path !== "src/routes/index.ts") ||
    path.startsWith("src/schemas/") ||
    (path.startsWith("src/openapi/") && path !== "src/openapi/routes.ts") ||
    path.startsWith("src/mcp/");
  const reached = reachedFrom(inputs, entry);
  return {
    eager: [...reached].filter(deferredKind),
    heavy: [...reached].filter(heavyModule),
    deferred: Object.keys(inputs).filter((path) => deferredKind(path) && !reached.has(path)).length,
  };
}

done(`${names.join(" and ")} build, with the local bindings and their secrets.`);
