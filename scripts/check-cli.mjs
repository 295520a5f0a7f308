#!/usr/bin/env node
// `npm run check:cli` (part of `npm test`): the TypeScript client as a user outside the repository
// gets it. It runs the client's own unit tests (clients/typescript/test: fake servers for the
// faults a real one rarely shows: dropped streams, slow answers), packs the package, installs the
// tarball into a scratch project in the system's temporary directory, and there, against
// `npm run dev` started on free ports with its own state (scripts/dev-server.mjs):
//   - type-checks and runs a consumer module that imports the package and calls the API, and
//     `require()`s it from a CommonJS file;
//   - runs the `deploy-platform` bin: whoami, projects, deployments list/get/cancel/wait with
//     their exit codes (0 succeeded, 1 failed, 2 cancelled, 3 timeout, 10/11/12 usage, refused,
//     unreachable) on deployments the internal API makes and moves;
//   - the operations of API_CONTRACT §18–§21 (variable sets and their versions, an import that
//     names the variables whose type it changes before it applies, the timeline, redeploy, keys:
//     scripts/lib/cli-part-three.mjs), §23–§26 and §27 (environments, deploy, config, promote
//     with an approval by a second admin and a rejection, protection, lock, `login --oidc` with
//     the runner's ID-token endpoint and an issuer of scripts/lib/oidc-issuer.mjs:
//     scripts/lib/cli-part-four.mjs) and §29–§31 (limits, an audit stream's life and the log's
//     tail, a deployment's checks: scripts/lib/cli-part-five.mjs): each case fails if the
//     service's /openapi.json does not document the operation it calls.
//   - the GitHub Action of actions/deploy/, bundled, as a runner runs it (scripts/check-action.mjs,
//     on this server, beside the CLI's checks).
// Every answer comes from the real service; nothing is faked here.
import { execFile as execFileCb } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { parse } from "@babel/parser";
import { checkAction } from "./check-action.mjs";
import { startDevServer } from "./dev-server.mjs";
import { checker } from "./lib/check.mjs";
import { partFourChecks } from "./lib/cli-part-four.mjs";
import { partThreeChecks } from "./lib/cli-part-three.mjs";
import { withPackLock } from "./lib/pack-lock.mjs";
import { runProcess } from "./lib/run-process.mjs";

const execFile = promisify(execFileCb);
const root = fileURLToPath(new URL("..", import.meta.url));
const pkgDir = join(root, "clients", "typescript");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const dir = mkdtempSync(join(tmpdir(), "check-cli-"));
const scratch = join(dir, "scratch");
const bin = join(scratch, "node_modules", ".bin", "deploy-platform");

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s`;
const { check, fail, done } = checker("check:cli", { prefix: elapsed });
/** A case whose operation /openapi.json does not document: a failure, not a skip. */
const undocumented = (what, why) => check(false, what, why);

/**
 * What a module imports: the specifiers of its static and dynamic imports, its re-exports and its
 * `require()` calls (a bundle's CommonJS parts), read from its syntax tree.
 */
function moduleSpecifiers(code) {
  const found = [];
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node.type !== "string") return;
    if (node.source?.type === "StringLiteral") found.push(node.source.value);
    const callee = node.type === "CallExpression" ? node.callee : undefined;
    const named = callee?.type === "Identifier" && /^(?:require|__require)$/.test(callee.name);
    if ((callee?.type === "Import" || named) && node.arguments[0]?.type === "StringLiteral")
      found.push(node.arguments[0].value);
    for (const [key, value] of Object.entries(node))
      if (key !== "loc" && value && typeof value === "object") visit(value);
  };
  visit(parse(code, { sourceType: "module" }).program);
  return found;
}

/** `npm pack` of clients/typescript, installed into a scratch project outside the repository. */
async function packAndInstall() {
  const packed = await withPackLock(() =>
    execFile(npm, ["pack", "--json", "--pack-destination", dir], { cwd: pkgDir }),
  );
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[")));
  const files = info.files.map((f) => f.path);
  const tarball = join(dir, info.filename);
  for (const f of [
    "dist/index.js",
    "dist/index.d.ts",
    "dist/schema.d.ts",
    "dist/cli/main.js",
    "README.md",
    "package.json",
  ])
    check(files.includes(f), `the tarball holds ${f}`, files.join(", "));
  check(
    !files.some((f) => f.startsWith("src/") || f.startsWith("test/")),
    "the tarball holds no sources or tests",
    files.join(", "),
  );

  mkdirSync(scratch);
  writeFileSync(
    join(scratch, "package.json"),
    JSON.stringify({ name: "scratch", private: true, type: "module" }),
  );
  const install = await runProcess(
    npm,
    ["install", tarball, "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"],
    {
      cwd: scratch,
    },
  );
  check(install.code === 0, "the tarball installs into a project outside the repository", install.stderr);
  check(existsSync(bin), "the install links the deploy-platform bin", "no node_modules/.bin/deploy-platform");
  // The bin is one module (clients/typescript/build.mjs): a call finds and compiles no other file
  // of the package or of its dependencies, only Node's own modules (beside it: yargs' translations,
  // JSON it reads for a user's language).
  const cliFiles = files.filter(
    (f) => f.startsWith("dist/cli/") && !/^dist\/cli\/locales\/[\w-]+\.json$/.test(f),
  );
  const imported = moduleSpecifiers(readFileSync(realpathSync(bin), "utf8"));
  const foreign = imported.filter((s) => !isBuiltin(s));
  check(
    cliFiles.join() === "dist/cli/main.js" && imported.length > 0 && foreign.length === 0,
    `the deploy-platform bin is one module that imports only Node's own (${imported.length} imports)`,
    `dist/cli/: ${cliFiles.join(", ")}; imports of other modules: ${foreign.join(", ")}`,
  );

  // CommonJS: `require()` of the package takes its `default` export condition, the same ES
  // module (require(esm): Node 20.19+, 22.12+).
  writeFileSync(
    join(scratch, "consumer.cjs"),
    `const client = require("@deploy-platform/client");
const api = client.createDeployClient({ baseUrl: "http://127.0.0.1:9", apiKey: "dpk_x" });
console.log(JSON.stringify({ get: typeof api.GET, unwrap: typeof client.unwrap, error: client.ApiError.name }));
`,
  );
  const required = await runProcess(process.execPath, ["consumer.cjs"], { cwd: scratch });
  check(
    required.code === 0 &&
      required.stdout === '{"get":"function","unwrap":"function","error":"ApiError"}\n' &&
      required.stderr === "",
    `require() of the package works from CommonJS (Node ${process.versions.node})`,
    JSON.stringify(required),
  );

  // A consumer written as a user would, type-checked against the installed .d.ts files.
  writeFileSync(
    join(scratch, "consumer.ts"),
    `declare const process: { env: Record<string, string> }; // no @types/node here
import { createDeployClient, pages, type Deployment, type TimelineEntry } from "@deploy-platform/client";
const api = createDeployClient({ baseUrl: process.env.DEPLOY_PLATFORM_URL, apiKey: process.env.DEPLOY_PLATFORM_API_KEY });
const names: string[] = [];
for await (const p of pages((after) => api.GET("/v1/projects", { params: { query: { after } } }))) names.push(p.name);
const { error } = await api.GET("/v1/deployments/{id}", { params: { path: { id: "1111111111111111111111" } } });
const last: Deployment["status"] | TimelineEntry["type"] = "queued";
console.log(JSON.stringify({ names, error: error?.code, last }));
`,
  );
  writeFileSync(
    join(scratch, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        module: "nodenext",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
        lib: ["es2022", "dom"],
      },
      files: ["consumer.ts"],
    }),
  );
  const tsc = join(pkgDir, "node_modules", "typescript", "bin", "tsc");
  const typed = await runProcess(process.execPath, [tsc, "-p", scratch], { cwd: scratch });
  check(
    typed.code === 0,
    "a consumer type-checks against the installed package's .d.ts",
    typed.stdout + typed.stderr,
  );
  const { transformSync } = await import("esbuild");
  const consumerJs = transformSync(readFileSync(join(scratch, "consumer.ts"), "utf8"), { loader: "ts" }).code;
  writeFileSync(join(scratch, "consumer.mjs"), consumerJs);
}

let server;
let serverReady;
let log = "";
let actionChecks;
try {
  // Three things at once: the server starts (wrangler, ~15 s); the unit tests run; the package is
  // packed (its `prepack` builds it), installed into the scratch project, and a consumer of it
  // type-checked there.
  serverReady = startDevServer(join(dir, "dev"));
  serverReady.catch(() => {});
  const unitRun = runProcess(npm, ["test", "--silent"], {
    cwd: pkgDir,
    env: { ...process.env, CI: "true", NO_COLOR: "1" },
  });
  await packAndInstall();
  const unit = await unitRun;
  const summary = unit.stdout.match(/Tests\s+.*\(\d+\)/)?.[0];
  check(
    unit.code === 0,
    `the client's unit tests pass (${summary ?? "no summary"})`,
    `${unit.stdout}\n${unit.stderr}`,
  );

  server = await serverReady;
  const { base, keyFile } = server;
  const key = readFileSync(keyFile, "utf8").trim();
  const env = { ...process.env, DEPLOY_PLATFORM_URL: base, DEPLOY_PLATFORM_API_KEY: key };
  const cli = (args, extra = {}) =>
    runProcess(bin, args, { cwd: scratch, env: { ...env, ...extra.env }, input: extra.input });
  const adminToken = readFileSync(join(root, ".dev.vars"), "utf8")
    .match(/^ADMIN_TOKEN=(.*)$/m)?.[1]
    ?.trim();
  const internal = async (method, path, body) => {
    const res = await fetch(`${base}/internal/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /internal/v1${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  // The GitHub Action of actions/deploy/ (scripts/check-action.mjs), on this server rather than a
  // wrangler of its own, beside the CLI's checks: an organization of its own, so neither uses the
  // other's rate-limit window or records.
  actionChecks = checkAction({ base, adminToken, check, dir }).catch(fail);
  const doc = await (await fetch(`${base}/openapi.json`)).json();
  const serves = (path, method) => Boolean(doc.paths?.[path]?.[method]);

  // Independent commands run side by side: each is a Node process start.
  const [consumer, who, projects, table, german] = await Promise.all([
    runProcess(process.execPath, ["consumer.mjs"], { cwd: scratch, env }),
    cli(["whoami"]),
    cli(["projects", "list", "--json"]),
    cli(["projects", "list"]),
    cli(["--help"], { env: { LC_ALL: "de_DE.UTF-8" } }),
  ]);
  // yargs' own words in the user's language, as before the bin was bundled (its translations ship
  // beside the bundle: clients/typescript/build.mjs).
  check(
    german.code === 0 && german.stdout.includes("Kommandos:") && german.stdout.includes("Hilfe anzeigen"),
    "the bundled bin speaks the user's language in yargs' own words (LC_ALL=de_DE.UTF-8 --help)",
    JSON.stringify(german),
  );
  const consumed = consumer.code === 0 ? JSON.parse(consumer.stdout) : null;
  check(
    consumed?.names?.includes("demo") && consumed.error === "not_found",
    "the installed package calls the local API (pages, typed errors)",
    consumer.stdout + consumer.stderr,
  );
  check(
    who.code === 0 && /^organization:\s+\S+/m.test(who.stdout),
    "whoami prints the key's identity",
    JSON.stringify(who),
  );
  const project = projects.code === 0 ? JSON.parse(projects.stdout).data[0] : null;
  check(project?.name === "demo", "projects list --json prints the envelope", JSON.stringify(projects));
  check(
    table.code === 0 && /^ID\s+NAME\s+CONNECTION/.test(table.stdout) && table.stdout.includes(project?.id),
    "projects list prints a table",
    JSON.stringify(table),
  );

  // Deployments made and moved by the internal API, the way the engine does.
  const envId = project.default_environment_id;
  const stack = await internal("POST", `/environments/${envId}/stacks`, { name: "web" });
  const newDeployment = () =>
    internal("POST", `/environments/${envId}/deployments`, { stack_ids: [stack.id], data: { patch: [] } });
  const move = (id, status, reason) =>
    internal("PATCH", `/deployments/${id}`, {
      status,
      stacks: [{ id: stack.id, status, ...(reason ? { status_reason: reason } : {}) }],
    });
  const later = (ms, fn) => new Promise((r) => setTimeout(r, ms)).then(fn);

  const errors = Promise.all([
    cli(["deployments", "get", "1111111111111111111111", "--json"]),
    cli(["whoami"], { env: { DEPLOY_PLATFORM_API_KEY: "dpk_wrong" } }),
    cli(["deployments", "wait"]),
    cli(["whoami", "--url", "http://127.0.0.1:9"]),
  ]);
  const [good, bad, stuck] = await Promise.all([newDeployment(), newDeployment(), newDeployment()]);
  await move(stuck.id, "in_progress");
  const drive = Promise.all([
    later(800, () => move(good.id, "in_progress")).then(() => later(800, () => move(good.id, "succeeded"))),
    later(800, () => move(bad.id, "in_progress")).then(() =>
      later(800, () => move(bad.id, "failed", "exit 1")),
    ),
  ]);
  const [waitGood, waitBad, timedOut] = await Promise.all([
    cli(["deployments", "wait", good.id, "--timeout", "60"]),
    cli(["deployments", "wait", bad.id, "--timeout", "60"]),
    cli(["deployments", "wait", stuck.id, "--timeout", "2"]),
  ]);
  await drive;
  const [missing, badKey, usage, unreachable] = await errors;
  check(
    missing.code === 11 && JSON.parse(missing.stderr || "{}").error?.code === "not_found",
    "--json errors are JSON on stderr",
    JSON.stringify(missing),
  );
  check(
    badKey.code === 11 && badKey.stderr.startsWith("error: unauthenticated:"),
    "a wrong key exits 11, unauthenticated",
    JSON.stringify(badKey),
  );
  check(
    usage.code === 10 && /Not enough non-option arguments/.test(usage.stderr),
    "bad usage exits 10",
    JSON.stringify(usage),
  );
  check(
    unreachable.code === 12 && /cannot reach the API/.test(unreachable.stderr),
    "an unreachable API exits 12",
    JSON.stringify(unreachable),
  );

  check(
    waitGood.code === 0 && waitGood.stdout.startsWith(`${good.id} succeeded`),
    "wait exits 0 when it succeeds",
    JSON.stringify(waitGood),
  );
  check(
    waitBad.code === 1 && waitBad.stdout.startsWith(`${bad.id} failed`),
    "wait exits 1 when it fails",
    JSON.stringify(waitBad),
  );
  check(waitGood.stderr === "", "no spinner when stderr is not a terminal", JSON.stringify(waitGood.stderr));

  check(
    timedOut.code === 3 && /timed out after 2 s/.test(timedOut.stderr),
    "wait exits 3 on timeout",
    JSON.stringify(timedOut),
  );
  const cancelled = await cli(["deployments", "cancel", stuck.id]);
  check(
    cancelled.code === 0 && cancelled.stdout === `${stuck.id} cancelled\n`,
    "cancel cancels",
    JSON.stringify(cancelled),
  );
  const waitCancelled = await cli(["deployments", "wait", stuck.id]);
  check(waitCancelled.code === 2, "wait exits 2 for a cancelled deployment", JSON.stringify(waitCancelled));
  const again = await cli(["deployments", "cancel", stuck.id]);
  check(
    again.code === 11 && /^error: conflict: .+\(HTTP 409, request \S+\)$/m.test(again.stderr),
    "a refused request exits 11 with the API's code and message on stderr",
    JSON.stringify(again),
  );

  const listed = await cli([
    "deployments",
    "list",
    "--environment",
    envId,
    "--status",
    "succeeded",
    "--json",
  ]);
  const listedIds = listed.code === 0 ? JSON.parse(listed.stdout).data.map((d) => d.id) : [];
  check(
    listedIds.length === 1 && listedIds[0] === good.id,
    "deployments list filters by environment and status",
    JSON.stringify(listed),
  );
  const got = await cli(["deployments", "get", bad.id]);
  check(
    got.code === 0 && /^status:\s+failed$/m.test(got.stdout) && got.stdout.includes("exit 1"),
    "deployments get shows it and its stacks",
    JSON.stringify(got),
  );

  // Parts three to five (§18–§21, §23–§27, §29–§31: scripts/lib/cli-part-*.mjs), in this world.
  const world = {
    cli,
    check,
    undocumented,
    serves,
    base,
    key,
    internal,
    project,
    envId,
    stack,
    newDeployment,
    move,
    failed: bad,
    scratch,
  };
  await partThreeChecks(world);
  await partFourChecks(world);
} catch (err) {
  fail(err);
} finally {
  await actionChecks;
  // A server still starting when a step before it failed is stopped too, not left running.
  server ??= await serverReady?.catch(() => undefined);
  log = server?.log() ?? log;
  server?.stop();
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}

done(
  "the packed client, its CLI and the GitHub Action work outside the repository.",
  ` The server's output:\n${log}`,
);
