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
//   - `wrangler deploy --dry-run --env <name> --secrets-file <file>` builds it (bundle, assets,
//     bindings; nothing is uploaded) as the deploy workflow deploys it, with a secrets file that
//     scripts/deploy-secrets.mjs wrote from made-up values; all environments at once;
//   - what a new isolate of that build evaluates before its first request (the modules the entry
//     reaches by static imports, from esbuild's metafile) holds no route module, no record schema,
//     no part of the OpenAPI document and no part of the MCP server: those are loaded on first use
//     (src/http/operations.ts, src/openapi/routes.ts, src/mcp/server.ts), and one static import
//     would bring them all back into every start; nor any module of the heavy packages only some
//     operations use (HEAVY_PACKAGES: `jose`, the OpenID Connect exchange's), which every new
//     isolate would evaluate;
//   - no read (GET) operation's module reaches a `*-writes.ts` module (the schemas of request
//     bodies, kept apart from the records so that a first read builds none of them);
//   - the build holds no module of the MCP SDK: a devDependency (the tests' client), not the
//     Worker's, whose server is src/mcp/transport.ts (26 KiB gzip less for every isolate to compile).
//
// `node scripts/check-deploy.mjs --ready <name>` (the deploy workflow, before it touches the
// account): refuses an environment whose D1 database_id is still the placeholder.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { deploySecrets } from "./deploy-secrets.mjs";
import { buildDocsAssets } from "./docs-assets.mjs";
import { checker } from "./lib/check.mjs";
import { environments, isPlaceholderId, readEnvironment as read } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages the tests use and the Worker must not bundle, by their path in node_modules. */
const DEV_ONLY = /node_modules\/@modelcontextprotocol\//;
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

const { check, done } = checker("check:deploy");
const plain = (value) => JSON.parse(JSON.stringify(value));
const same = (a, b) => JSON.stringify(plain(a)) === JSON.stringify(plain(b));

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
    same(
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
    same(byName(c.durable_objects.bindings), byName(local.durable_objects.bindings)),
    `[env.${env}] Durable Object: ${c.durable_objects.bindings.map((b) => `${b.name} → ${b.class_name}`).join(", ")}`,
  );
  check(
    same(c.queues, local.queues),
    `[env.${env}] queues: ${c.queues.producers.map((p) => `${p.binding} → ${p.queue}`).join(", ")}; consumers ${c.queues.consumers.map((q) => q.queue).join(", ")} as locally`,
    JSON.stringify(plain(c.queues)),
  );
  check(
    same(Object.keys(c.vars).sort(), Object.keys(local.vars).sort()) &&
      c.vars.ALLOW_INSECURE_WEBHOOKS === "false",
    `[env.${env}] vars: ${JSON.stringify(plain(c.vars))}`,
  );
  // API_CONTRACT §1, §27: an http:// or loopback OpenID Connect issuer is for local issuers only; a
  // deployed environment that trusted one would take keys vouched for over plain HTTP.
  check(
    c.vars.ALLOW_INSECURE_OIDC_ISSUERS === "false",
    `[env.${env}] ALLOW_INSECURE_OIDC_ISSUERS is "false"`,
    `it is ${JSON.stringify(c.vars.ALLOW_INSECURE_OIDC_ISSUERS ?? null)}`,
  );
  check(
    same(c.triggers, local.triggers) && c.assets?.directory === local.assets?.directory,
    `[env.${env}] crons and assets as locally`,
  );
  check(
    same(c.migrations, local.migrations),
    `[env.${env}] Durable Object migrations: ${c.migrations.map((m) => m.tag).join(", ")}`,
    JSON.stringify(plain(c.migrations)),
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
buildDocsAssets();
const run = promisify(execFile);
const wrangler = join(
  root,
  "node_modules",
  ".bin",
  process.platform === "win32" ? "wrangler.cmd" : "wrangler",
);
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
  const results = await Promise.all(
    names.map((env) =>
      run(
        wrangler,
        [
          ...["deploy", "--dry-run", "--env", env, "--secrets-file", secretsFile],
          ...["--outdir", join(out, env), "--metafile"],
        ],
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
    ),
  );
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
    if (ok) {
      const meta = JSON.parse(readFileSync(join(out, env, "bundle-meta.json"), "utf8"));
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
      const devOnly = Object.keys(meta.inputs).filter((path) => DEV_ONLY.test(path));
      check(
        devOnly.length === 0,
        `${env}: the bundle holds no module of the MCP SDK (the tests' client, not the Worker's)`,
        `bundled: ${devOnly.join(", ")}`,
      );
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

/**
 * The read operations (`get`, from src/routes/index.ts) whose module reaches, by static imports, a
 * `*-writes.ts` module: the schemas of request bodies (and what only writes answer) are kept apart
 * from the records (src/schemas/*-writes.ts, src/routes/variables/set-writes.ts), so that a new
 * isolate's first read builds none of them (bench/README.md, "Building an operation").
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
    const reached = new Set([module]);
    for (const file of reached) {
      for (const edge of inputs[file]?.imports ?? []) {
        if (edge.kind === "import-statement" && !edge.external) reached.add(edge.path);
      }
    }
    const bodies = [...reached].filter((file) => file.endsWith("-writes.ts"));
    if (bodies.length > 0) offenders.push(`GET ${path} (${module}) reaches ${bodies.join(", ")}`);
  }
  return { count: reads.length, offenders };
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
  const reached = new Set([entry]);
  for (const path of reached) {
    for (const edge of inputs[path]?.imports ?? []) {
      if (edge.kind === "import-statement" && !edge.external) reached.add(edge.path);
    }
  }
  return {
    eager: [...reached].filter(deferredKind),
    heavy: [...reached].filter(heavyModule),
    deferred: Object.keys(inputs).filter((path) => deferredKind(path) && !reached.has(path)).length,
  };
}

done(`${names.join(" and ")} build, with the local bindings and their secrets.`);
