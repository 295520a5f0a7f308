#!/usr/bin/env node
// `npm run check:cli` (part of `npm test`): the TypeScript client as a user outside the repository
// gets it. It runs the client's own unit tests (clients/typescript/test: fake servers for the
// faults a real one rarely shows: dropped streams, slow answers), packs the package, installs the
// tarball into a scratch project in the system's temporary directory, and there, against `npm run dev` started on free
// ports with its own state (scripts/dev-server.mjs):
//   - type-checks and runs a consumer module that imports the package and calls the API, and
//     `require()`s it from a CommonJS file;
//   - runs the `deploy-platform` bin: whoami, projects, deployments list/get/cancel/wait with
//     their exit codes (0 succeeded, 1 failed, 2 cancelled, 3 timeout, 10/11/12 usage, refused,
//     unreachable) on deployments the internal API makes and moves;
//   - the operations of API_CONTRACT §18–§21 (variable sets and their versions, an import that
//     names the variables whose type it changes before it applies, the timeline,
//     redeploy, keys) and §23–§26 (environments, deploy, config, promote with an approval by a
//     second admin and a rejection, protection, lock), §29–§31 (limits, an audit stream's life
//     and the log's tail, a deployment's checks): each case fails if the service's
//     /openapi.json does not document the operation it calls. `login --oidc` (§27) runs here with
//     the runner's ID-token endpoint and an issuer of scripts/lib/oidc-issuer.mjs.
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
import { partFiveChecks } from "./lib/cli-part-five.mjs";
import { startIssuer } from "./lib/oidc-issuer.mjs";
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
let log = "";
let actionChecks;
try {
  // Three things at once: the server starts (wrangler, ~15 s); the unit tests run; the package is
  // packed (its `prepack` builds it), installed into the scratch project, and a consumer of it
  // type-checked there.
  const serverReady = startDevServer(join(dir, "dev"));
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

  // §19: follow, when the service serves the timeline.
  if (serves("/v1/deployments/{id}/timeline", "get")) {
    for (const [final, code] of [
      ["succeeded", 0],
      ["failed", 1],
    ]) {
      const d = await newDeployment();
      const following = cli(["deployments", "follow", d.id, "--timeout", "60"]);
      await later(500, () => move(d.id, "in_progress"));
      await internal("POST", `/deployments/${d.id}/logs`, {
        lines: [{ message: "step one" }, { message: "warn", stream: "stderr", stack_id: stack.id }],
      });
      await later(300, () =>
        internal("POST", `/deployments/${d.id}/logs`, { lines: [{ message: "step two" }] }),
      );
      await move(d.id, final, final === "failed" ? "exit 1" : undefined);
      const r = await following;
      const lines = r.stdout.trimEnd().split("\n");
      check(
        r.code === code &&
          lines.at(-1) === `${d.id} ${final}` &&
          lines.filter((l) => / step one$/.test(l)).length === 1 &&
          lines.some((l) => l.endsWith(`[${stack.id}] ! warn`)) &&
          lines.some((l) => l.endsWith(" step two")),
        `follow prints each entry once and exits ${code} when it ${final}`,
        JSON.stringify(r),
      );
    }
  } else
    undocumented(
      "deployments follow",
      "the service does not document GET /v1/deployments/{id}/timeline yet (API_CONTRACT §19)",
    );

  // §18: a .env round trip and a dry run, when the service serves variable sets.
  if (
    serves("/v1/environments/{environment_id}/variables", "patch") &&
    serves("/v1/environments/{environment_id}/variables/export", "get")
  ) {
    const put = (name, value, type = "secret") =>
      fetch(`${base}/v1/environments/${envId}/variables`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ name, type, value }),
      });
    await put("DATABASE_URL", "postgres://u:p@db/app");
    await put("GREETING", 'say "hi"\nthen \\ leave');
    const versions = async () =>
      (
        await (
          await fetch(`${base}/v1/environments/${envId}/variables/versions`, {
            headers: { "x-api-key": key },
          })
        ).json()
      ).data.map((v) => v.version);
    const before = await versions();
    const exported = await cli(["variables", "export", "--environment", envId, "-o", "prod.env"]);
    const text = exported.code === 0 ? readFileSync(join(scratch, "prod.env"), "utf8") : "";
    check(
      exported.code === 0 && text.includes("DATABASE_URL=") && text.includes("GREETING="),
      "variables export writes the .env file",
      JSON.stringify(exported),
    );
    const dry = await cli([
      "variables",
      "import",
      "prod.env",
      "--environment",
      envId,
      "--replace",
      "--type",
      "secret",
      "--dry-run",
    ]);
    check(
      dry.code === 0 && /dry run: no change/.test(dry.stdout),
      "a dry run of the export shows no change",
      JSON.stringify(dry),
    );
    writeFileSync(join(scratch, "edited.env"), `${text}NEW_ONE=fresh-value\n`);
    const preview = await cli(["variables", "import", "edited.env", "--environment", envId, "--dry-run"]);
    check(
      preview.code === 0 &&
        /^created\s+NEW_ONE\s+secret/m.test(preview.stdout) &&
        !preview.stdout.includes("fresh-value") &&
        !preview.stdout.includes("postgres://"),
      "a dry run prints the diff, never a value",
      JSON.stringify(preview),
    );
    const applied = await cli([
      "variables",
      "import",
      "prod.env",
      "--environment",
      envId,
      "--replace",
      "--type",
      "secret",
    ]);
    check(
      applied.code === 0 && /no change/.test(applied.stdout),
      "importing the export changes nothing",
      JSON.stringify(applied),
    );
    const reexported = await cli(["variables", "export", "--environment", envId]);
    check(
      reexported.stdout === text,
      "the .env round-trips unchanged",
      JSON.stringify([text, reexported.stdout]),
    );
    check(
      JSON.stringify(await versions()) === JSON.stringify(before),
      "the dry runs and the no-change import made no version",
      JSON.stringify(before),
    );
    const listedVersions = await cli(["variables", "versions", "--environment", envId, "--json"]);
    const shown =
      listedVersions.code === 0 ? JSON.parse(listedVersions.stdout).data.map((v) => v.version) : [];
    check(
      shown.length >= 2 && JSON.stringify(shown) === JSON.stringify(before),
      "variables versions lists the scope's versions, newest first",
      JSON.stringify(listedVersions),
    );
    const [newest] = shown;
    const oldest = shown.at(-1);
    const rewind = await cli(["variables", "restore", String(oldest), "--environment", envId, "--dry-run"]);
    const same = await cli(["variables", "restore", String(newest), "--environment", envId]);
    check(
      rewind.code === 0 &&
        new RegExp(`^dry run: would make version ${newest + 1}: `, "m").test(rewind.stdout) &&
        !rewind.stdout.includes("postgres://") &&
        same.code === 0 &&
        same.stdout === `no change (version ${newest})\n` &&
        JSON.stringify(await versions()) === JSON.stringify(before),
      "variables restore: a dry run shows the change, restoring the current version changes nothing",
      JSON.stringify([rewind, same]),
    );

    // A scope that mixes types: the file carries none, so its import retypes the `string` one. The
    // CLI says so, by name, before the change; a restore of the version before brings it back.
    await put("LOG_LEVEL", "info", "string");
    const [mixed] = await versions();
    const mixedText = (await cli(["variables", "export", "--environment", envId])).stdout;
    writeFileSync(join(scratch, "mixed.env"), mixedText);
    const retyped = await cli(["variables", "import", "mixed.env", "--environment", envId, "--replace"]);
    const typeOf = async (name) =>
      (
        await (
          await fetch(`${base}/v1/environments/${envId}/variables?limit=240`, {
            headers: { "x-api-key": key },
          })
        ).json()
      ).data.find((v) => v.name === name)?.type;
    const retypedAs = await typeOf("LOG_LEVEL");
    const restored = await cli(["variables", "restore", String(mixed), "--environment", envId]);
    check(
      retyped.code === 0 &&
        /^warning: .*this import changes the type of 1 variable: LOG_LEVEL \(string → secret\)/m.test(
          retyped.stderr,
        ) &&
        /^updated\s+LOG_LEVEL\s+string → secret/m.test(retyped.stdout) &&
        retypedAs === "secret" &&
        restored.code === 0 &&
        (await typeOf("LOG_LEVEL")) === "string",
      "an import over a string variable names it (string → secret) before it applies; a restore brings the type back",
      JSON.stringify([retyped, retypedAs, restored]),
    );
  } else
    undocumented(
      "variables export | import",
      "the service does not document PATCH {scope}/variables and its export yet (API_CONTRACT §18)",
    );

  // §20: redeploy.
  if (serves("/v1/deployments/{id}/redeploy", "post")) {
    const r = await cli(["deployments", "redeploy", bad.id, "--json"]);
    const made = r.code === 0 ? JSON.parse(r.stdout) : null;
    check(
      made?.status === "queued" && made.redeploy_of === bad.id,
      "redeploy makes a queued copy",
      JSON.stringify(r),
    );
  } else
    undocumented(
      "deployments redeploy",
      "the service does not document POST /v1/deployments/{id}/redeploy yet (API_CONTRACT §20)",
    );

  // §21: keys that make keys.
  if (serves("/v1/api-keys", "post")) {
    const created = await cli(["keys", "create", "--name", "ci", "--scope", "deployments:read", "--json"]);
    const made = created.code === 0 ? JSON.parse(created.stdout) : null;
    check(
      made?.key?.startsWith("dpk_") && made.scopes.join() === "deployments:read",
      "keys create makes a narrower key",
      JSON.stringify(created),
    );
    const narrow = await cli(["deployments", "list"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    const refused = await cli(["projects", "list"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    check(
      narrow.code === 0 && refused.code === 11,
      "the new key can do what it was given and no more",
      JSON.stringify([narrow, refused]),
    );
    const shownKey = await cli(["keys", "get", made?.id, "--json"]);
    check(
      shownKey.code === 0 &&
        JSON.parse(shownKey.stdout).id === made?.id &&
        !shownKey.stdout.includes(made?.key),
      "keys get shows the key's record, never the key",
      JSON.stringify(shownKey),
    );
    const listedKeys = await cli(["keys", "list", "--all", "--json"]);
    check(
      listedKeys.code === 0 && JSON.parse(listedKeys.stdout).data.some((k) => k.id === made?.id),
      "keys list shows it",
      JSON.stringify(listedKeys),
    );
    const revoked = await cli(["keys", "revoke", made?.id]);
    const after = await cli(["whoami"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    check(
      revoked.code === 0 && after.code === 11,
      "keys revoke revokes it",
      JSON.stringify([revoked, after]),
    );
  } else
    undocumented(
      "keys create | list | revoke",
      "the service does not document POST /v1/api-keys yet (API_CONTRACT §21)",
    );

  // §23–§26: a release's way to production, from the command line.
  const releaseOps = [
    ["/v1/projects/{project_id}/environments", "post"],
    ["/v1/environments/{environment_id}/deployments", "post"],
    ["/v1/deployments/{id}/config/diff", "get"],
    ["/v1/deployments/{id}/promote", "post"],
    ["/v1/deployments/{id}/reviews", "post"],
    ["/v1/environments/{environment_id}/protection", "put"],
    ["/v1/environments/{environment_id}/lock", "post"],
  ];
  const missingOps = releaseOps.filter(([path, method]) => !serves(path, method));
  if (missingOps.length === 0) await releaseChecks();
  else
    undocumented(
      "environments, deploy, promote, approve, lock, protection, config",
      `the service does not document ${missingOps.map(([p, m]) => `${m.toUpperCase()} ${p}`).join(", ")} yet (API_CONTRACT §23–§26)`,
    );

  // §27: `login --oidc` as a GitHub Actions job runs it: the runner's ID-token endpoint and an
  // issuer the service trusts (scripts/lib/oidc-issuer.mjs), the key written to a file of mode 600
  // and to $GITHUB_ENV, never printed; later commands use it.
  if (serves("/v1/oidc/token", "post")) await loginChecks();
  else console.log("note login --oidc: not run here, the service does not serve POST /v1/oidc/token");

  async function loginChecks() {
    const issuer = await startIssuer();
    try {
      const trust = await (
        await fetch(`${base}/v1/oidc-trusts`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({
            name: "cli",
            issuer: issuer.origin,
            audience: "deploy-platform",
            conditions: { repository: "acme/*" },
            scopes: ["projects:read"],
          }),
        })
      ).json();
      const keyPath = join(scratch, "oidc", "api-key");
      const githubEnv = join(scratch, "github-env");
      writeFileSync(githubEnv, "");
      const loginEnv = {
        ...issuer.env,
        GITHUB_ACTIONS: "true",
        GITHUB_ENV: githubEnv,
        DEPLOY_PLATFORM_API_KEY: "",
        DEPLOY_PLATFORM_API_KEY_FILE: keyPath,
      };
      const login = await cli(["login", "--oidc", "--trust", trust.id, "--audience", "deploy-platform"], {
        env: loginEnv,
      });
      const written = existsSync(keyPath) ? readFileSync(keyPath, "utf8").trim() : "";
      if (!written) console.error(`login --oidc: ${JSON.stringify(login)}`);
      check(
        login.code === 0 &&
          /^dpk_/.test(written) &&
          // Only in the workflow command that masks it, which the runner never shows.
          login.stdout.includes(`::add-mask::${written}`) &&
          !login.stdout.replace(`::add-mask::${written}`, "").includes(written) &&
          !login.stderr.includes(written) &&
          readFileSync(githubEnv, "utf8").includes(`DEPLOY_PLATFORM_API_KEY=${written}`),
        "login --oidc trades the runner's ID token for a key, kept in a file and $GITHUB_ENV, never printed",
        JSON.stringify({ ...login, trust }),
      );
      const me = await cli(["whoami", "--json"], {
        env: { DEPLOY_PLATFORM_API_KEY: "", DEPLOY_PLATFORM_API_KEY_FILE: keyPath },
      });
      check(
        me.code === 0 && JSON.parse(me.stdout).oidc?.trust_id === trust.id,
        "a later command uses the exchanged key (whoami shows its trust)",
        JSON.stringify(me),
      );
      await fetch(`${base}/v1/oidc-trusts/${trust.id}`, { method: "DELETE", headers: { "x-api-key": key } });
      const gone = await cli(["login", "--oidc", "--trust", trust.id, "--audience", "deploy-platform"], {
        env: loginEnv,
      });
      check(
        gone.code === 11 && /unauthenticated/.test(gone.stderr) && !/^\s+at /m.test(gone.stderr),
        "login --oidc with a deleted trust exits 11 with the API's code and message, no stack trace",
        JSON.stringify(gone),
      );
    } finally {
      await issuer.close();
    }
  }

  async function releaseChecks() {
    const json = (r) => (r.code === 0 ? JSON.parse(r.stdout) : null);
    const noTrace = (r) => !/^\s+at /m.test(r.stderr);
    const stackOf = (environment) =>
      internal("POST", `/environments/${environment}/stacks`, { name: "web", template_id: "web" });
    // A second admin of the organization: a deployment's creator may not approve it.
    const { org_id: org } = await (
      await fetch(`${base}/v1/api-keys/current`, { headers: { "x-api-key": key } })
    ).json();
    const ada = await internal("POST", "/accounts", { name: "ada" });
    await internal("POST", `/orgs/${org}/members`, { account_id: ada.id, role: "admin" });
    const adminKey = (
      await internal("POST", `/orgs/${org}/api-keys`, { account_id: ada.id, created_by: ada.id })
    ).key;

    const made = await cli([
      "environments",
      "create",
      "cli-staging",
      "--project",
      project.id,
      "--copy-variables-from",
      envId,
      "--json",
    ]);
    const staging = json(made);
    const prodMade = await cli(["environments", "create", "cli-prod", "--project", project.id]);
    const listed = json(await cli(["environments", "list", "--project", project.id, "--json"]));
    const prod = listed?.data.find((e) => e.name === "cli-prod");
    check(
      staging?.name === "cli-staging" && prodMade.code === 0 && prod !== undefined,
      "environments create (--copy-variables-from) and list",
      JSON.stringify([made, prodMade, listed]),
    );
    const renamed = await cli(["environments", "rename", staging?.id, "cli-stage"]);
    const got = json(await cli(["environments", "get", staging?.id, "--json"]));
    check(
      renamed.code === 0 && got?.name === "cli-stage",
      "environments rename and get",
      JSON.stringify([renamed, got]),
    );
    await Promise.all([stackOf(staging.id), stackOf(prod.id)]);

    // deploy: creates the deployment and follows it to its end; the engine moves it meanwhile.
    const deployed = cli(["deploy", staging.id, "--image", "registry.example/web:9", "--timeout", "60"]);
    let dep;
    for (let i = 0; i < 100 && !dep; i++) {
      await later(200, () => {});
      const page = await (
        await fetch(`${base}/v1/environments/${staging.id}/deployments`, { headers: { "x-api-key": key } })
      ).json();
      dep = page.data?.[0];
    }
    await internal("PATCH", `/deployments/${dep.id}`, { status: "in_progress" });
    await internal("POST", `/deployments/${dep.id}/logs`, { lines: [{ message: "pulling web:9" }] });
    await later(300, () => internal("PATCH", `/deployments/${dep.id}`, { status: "succeeded" }));
    const followed = await deployed;
    const lines = followed.stdout.trimEnd().split("\n");
    check(
      followed.code === 0 &&
        lines.at(-1) === `${dep.id} succeeded` &&
        lines.some((l) => l.endsWith(" pulling web:9")) &&
        dep.data?.source?.registry?.image === "registry.example/web:9",
      "deploy creates a deployment from its flags, follows it and exits 0 when it succeeds",
      JSON.stringify([followed, dep]),
    );
    const unknown = await cli(["deploy", "1111111111111111111111", "--no-follow"]);
    check(
      unknown.code === 11 &&
        /^error: not_found: .+\(HTTP 404, request \S+\)$/m.test(unknown.stderr) &&
        noTrace(unknown),
      "deploy to an unknown environment exits 11 with the API's code and message, no stack trace",
      JSON.stringify(unknown),
    );

    const shown = await cli(["config", "show", dep.id]);
    const diff = json(await cli(["config", "diff", dep.id, "--against", "current", "--json"]));
    check(
      shown.code === 0 && shown.stdout.startsWith("SCOPE") && diff?.deployment_id === dep.id,
      "config show and config diff --against current",
      JSON.stringify([shown, diff]),
    );

    const plan = await cli(["promote", dep.id, "--to", prod.id, "--dry-run"]);
    const unasked = await cli(["promote", dep.id, "--to", prod.id]);
    check(
      plan.code === 0 &&
        plan.stdout.startsWith(`promote ${dep.id} to ${prod.id}`) &&
        /dry run: nothing was promoted/.test(plan.stdout),
      "promote --dry-run prints the plan",
      JSON.stringify(plan),
    );
    check(
      unasked.code === 10 && /not promoted: .*not a terminal.*--yes/.test(unasked.stderr),
      "promote without a terminal and without --yes refuses, exit 10",
      JSON.stringify(unasked),
    );
    const refused = await cli(["promote", bad.id, "--to", prod.id, "--yes"]);
    check(
      refused.code === 11 && /^error: conflict: /m.test(refused.stderr) && noTrace(refused),
      "promoting a failed deployment exits 11 with the API's conflict",
      JSON.stringify(refused),
    );

    const protectedProd = await cli(["protection", "set", prod.id, "--required-approvals", "1", "--json"]);
    check(
      json(protectedProd)?.required_approvals === 1 && json(protectedProd)?.reviewer_role === "owner",
      "protection set changes the setting given and keeps the others",
      JSON.stringify(protectedProd),
    );
    const promoted = json(await cli(["promote", dep.id, "--to", prod.id, "--yes", "--json"]))?.deployment;
    const self = await cli(["approve", promoted?.id]);
    const approved = await cli(["approve", promoted?.id, "--comment", "LGTM", "--api-key", adminKey]);
    check(
      promoted?.status === "waiting" &&
        promoted.gate?.blocked_by.includes("approval") &&
        self.code === 11 &&
        /^error: forbidden: /m.test(self.stderr) &&
        approved.code === 0 &&
        approved.stdout === `${promoted.id} approved: now queued\n`,
      "promote --yes into a protected environment waits; its creator may not approve; another admin's approval queues it",
      JSON.stringify([promoted, self, approved]),
    );
    const again = json(await cli(["promote", dep.id, "--to", prod.id, "--yes", "--json"]))?.deployment;
    const rejected = await cli(["reject", again?.id, "--comment", "not today", "--api-key", adminKey]);
    const waiting = json(
      await cli(["deployments", "list", "--environment", prod.id, "--status", "waiting", "--json"]),
    );
    check(
      rejected.code === 0 &&
        rejected.stdout === `${again?.id} rejected: now cancelled\n` &&
        waiting?.data.length === 0,
      "reject cancels a waiting deployment",
      JSON.stringify([rejected, waiting]),
    );

    const locked = await cli(["lock", prod.id, "--reason", "freeze"]);
    const twice = await cli(["lock", prod.id, "--reason", "freeze"]);
    const seen = json(await cli(["protection", "get", prod.id, "--json"]));
    const unlocked = await cli(["unlock", prod.id]);
    const after = json(await cli(["protection", "get", prod.id, "--json"]));
    check(
      locked.code === 0 &&
        twice.code === 11 &&
        /^error: conflict: /m.test(twice.stderr) &&
        seen?.locked?.reason === "freeze" &&
        unlocked.code === 0 &&
        after?.locked === null,
      "lock, a second lock refused (11), protection get, unlock",
      JSON.stringify([locked, twice, seen, unlocked, after]),
    );

    // Part five: limits, an audit stream's life and the log's tail, a deployment's checks.
    await partFiveChecks({
      cli,
      json,
      check,
      undocumented,
      serves,
      base,
      key,
      internal,
      environment: prod.id,
    });

    const deleted = await cli(["environments", "delete", staging.id]);
    const gone = await cli(["environments", "get", staging.id]);
    check(
      deleted.code === 0 && gone.code === 11 && /^error: not_found: /m.test(gone.stderr),
      "environments delete",
      JSON.stringify([deleted, gone]),
    );

    writeFileSync(join(scratch, "empty.env"), "# nothing here\n");
    const empty = await cli(["variables", "import", "empty.env", "--environment", envId, "--replace"]);
    check(
      empty.code === 10 && /empty\.env holds no variables/.test(empty.stderr),
      "an import of a file without variables says so, exit 10",
      JSON.stringify(empty),
    );
  }
} catch (err) {
  fail(err);
} finally {
  await actionChecks;
  log = server?.log() ?? log;
  server?.stop();
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dir, { recursive: true, force: true });
}

done(
  "the packed client, its CLI and the GitHub Action work outside the repository.",
  ` The server's output:\n${log}`,
);
