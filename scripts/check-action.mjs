#!/usr/bin/env node
// `npm run check:action` (part of `npm test`): the GitHub Action of actions/deploy/ as a runner
// runs it. The committed bundle (`node actions/deploy/dist/index.js`, the file action.yml names) is
// started as a child process against `npm run dev` (scripts/dev-server.mjs: spare ports, its own
// state) with the GitHub environment emulated: INPUT_* variables as the runner sets them (action.yml's
// defaults, then the step's `with:`), GITHUB_SHA, GITHUB_REF, GITHUB_REPOSITORY… and a push
// event's payload, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and, for OpenID Connect, the
// runner's ID-token endpoint (ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN), served beside a local issuer
// (discovery document and key set: scripts/lib/oidc-issuer.mjs, the issuer `npm run dev:issuer`
// serves); a trust on the dev server trusts that issuer (.dev.vars: ALLOW_INSECURE_OIDC_ISSUERS=true). The deployment engine's
// side is this script's, through the internal API. It checks:
//   - with trust-id (no API key): a deployment created from the workflow's commit (data.source.git),
//     followed to success: exit 0, outputs, the summary (stack statuses, the log's tail as text,
//     no link), the exchanged key masked and printed nowhere else, no engine log line taken as a
//     workflow command;
//   - with api-key: a promotion of it that the engine fails: the job fails (exit code not 0), the
//     outputs say failed, the summary is written with the stack's reason;
//   - refusals fail the step with the API's code and message and no stack trace: a promotion of a
//     failed deployment (conflict), an unknown environment (not_found), a deleted trust
//     (unauthenticated); a deployment no one moves fails the step when `timeout` passes; `wait:
//     false` ends the step once it is created, with `source` and `stack-ids` sent as given;
//   - with check: a waiting deployment's check concluded (§31), which releases it; a conclusion
//     once it no longer waits fails the step with the API's conflict.
// `node scripts/check-action.mjs` starts its own server; `checkAction()` runs on a server that is
// already up.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parse } from "yaml";
import { startDevServer } from "./dev-server.mjs";
import { checker } from "./lib/check.mjs";
import { startIssuer } from "./lib/oidc-issuer.mjs";
import { runProcess } from "./lib/run-process.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bundle = join(root, "actions", "deploy", "dist", "index.js");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The step's outputs as the runner reads $GITHUB_OUTPUT (`name<<delimiter` blocks; the last wins). */
export function parseOutputs(text) {
  const outputs = {};
  for (const m of text.matchAll(/^([^\n<]+)<<(\S+)\n([\s\S]*?)\n\2$/gm)) outputs[m[1]] = m[3];
  return outputs;
}

/**
 * Runs the bundled action as a step with `inputs` (its `with:`), in a scratch directory of its own
 * (the event payload, $GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY); nothing of this process's own GitHub
 * environment reaches it (npm test may itself run on GitHub Actions). Resolves, never rejects.
 */
async function runAction(dir, inputs, extraEnv = {}) {
  const step = mkdtempSync(join(dir, "step-"));
  const output = join(step, "output");
  const summary = join(step, "summary.md");
  const event = join(step, "event.json");
  writeFileSync(output, "");
  writeFileSync(summary, "");
  const sha = "3f2c1e0d9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e";
  writeFileSync(
    event,
    JSON.stringify({
      ref: "refs/heads/main",
      head_commit: {
        id: sha,
        message: "web: a faster checkout",
        author: { name: "Ada Lovelace", email: "ada@example.com", username: "ada" },
        committer: { name: "GitHub", email: "noreply@github.com", username: "web-flow" },
      },
    }),
  );
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(INPUT_|GITHUB_|ACTIONS_|RUNNER_)/.test(k)),
  );
  // As the runner: every input of action.yml with a default, then the step's own.
  const action = parse(readFileSync(join(root, "actions", "deploy", "action.yml"), "utf8"));
  const given = { ...inputs };
  for (const [name, spec] of Object.entries(action.inputs))
    if (given[name] === undefined && spec.default !== undefined) given[name] = String(spec.default);
  for (const [name, value] of Object.entries(given))
    env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] = value;
  Object.assign(env, {
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_SHA: sha,
    GITHUB_REF: "refs/heads/main",
    GITHUB_REPOSITORY: "acme/storefront",
    GITHUB_REPOSITORY_OWNER: "acme",
    GITHUB_REPOSITORY_ID: "700100",
    GITHUB_EVENT_NAME: "push",
    GITHUB_EVENT_PATH: event,
    GITHUB_OUTPUT: output,
    GITHUB_STEP_SUMMARY: summary,
    RUNNER_TEMP: step,
    ...extraEnv,
  });
  const run = await runProcess(process.execPath, [bundle], { cwd: step, env });
  return {
    ...run,
    outputs: parseOutputs(readFileSync(output, "utf8")),
    summary: readFileSync(summary, "utf8"),
    sha,
  };
}

/** The action's checks, on the server at `base` (its internal API behind `adminToken`). */
export async function checkAction({ base, adminToken, check, dir }) {
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
  // An organization of its own: its key's rate-limit window is nobody else's.
  const org = await internal("POST", "/orgs", { name: "action check" });
  const owner = await internal("POST", "/accounts", { name: "release-owner" });
  await internal("POST", `/orgs/${org.id}/members`, { account_id: owner.id, role: "owner" });
  const key = (
    await internal("POST", `/orgs/${org.id}/api-keys`, { account_id: owner.id, created_by: owner.id })
  ).key;
  const api = async (method, path, body) => {
    const res = await fetch(`${base}/v1${path}`, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /v1${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const project = await api("POST", "/projects", { name: "storefront" });
  const production = project.default_environment_id;
  const staging = (await api("POST", `/projects/${project.id}/environments`, { name: "staging" })).id;
  const [stagingStack, productionStack] = await Promise.all(
    [staging, production].map((env) =>
      internal("POST", `/environments/${env}/stacks`, { name: "web", template_id: "web" }),
    ),
  );

  const issuer = await startIssuer();
  try {
    const trustFields = {
      issuer: issuer.origin,
      audience: "deploy-platform",
      conditions: { repository: "acme/storefront", ref: "refs/heads/*" },
      scopes: ["deployments:read", "deployments:write"],
      project_ids: [project.id],
      ttl: 300,
    };
    const trust = await api("POST", "/oidc-trusts", { name: "storefront deploys", ...trustFields });
    const gone = await api("POST", "/oidc-trusts", { name: "deleted", ...trustFields });
    await api("DELETE", `/oidc-trusts/${gone.id}`);

    /** The engine's side: the deployment the action made in `env` (not one of `known`). */
    const known = new Set();
    const created = async (env) => {
      for (let i = 0; i < 150; i++) {
        const page = await api("GET", `/environments/${env}/deployments?limit=5`);
        const d = page.data.find((x) => !known.has(x.id));
        if (d) {
          known.add(d.id);
          return d;
        }
        await sleep(100);
      }
      throw new Error(`no deployment appeared in ${env}`);
    };
    const move = (id, status, stacks) => internal("PATCH", `/deployments/${id}`, { status, stacks });
    const noTrace = (r) => !/^\s+at .+:\d+:\d+\)?$/m.test(r.stdout + r.stderr);
    const commandLines = (r) => r.stdout.split("\n").filter((l) => /^\s*::/.test(l));

    // 1. trust-id: a deployment of the workflow's commit, to success.
    const deploying = runAction(
      dir,
      {
        url: base,
        "trust-id": trust.id,
        environment: staging,
        timeout: "60",
      },
      issuer.env,
    );
    const d1 = await created(staging);
    await move(d1.id, "in_progress", [{ id: stagingStack.id, status: "in_progress" }]);
    await internal("POST", `/deployments/${d1.id}/logs`, {
      lines: [
        { message: "pulling registry.example/web:3f2c1e0" },
        {
          message: 'ready: <a href="https://evil.example/">dashboard</a> https://web.example/ @octocat #12',
          stack_id: stagingStack.id,
        },
        { message: "a line\n::warning::from the engine, not a workflow command", stream: "stderr" },
      ],
    });
    await move(d1.id, "succeeded", [{ id: stagingStack.id, status: "succeeded" }]);
    const ok = await deploying;
    const record = await api("GET", `/deployments/${d1.id}`);
    check(
      ok.code === 0 &&
        ok.outputs["deployment-id"] === d1.id &&
        ok.outputs.status === "succeeded" &&
        noTrace(ok),
      "trust-id: the action deploys, follows the deployment to success and exits 0 (outputs deployment-id, status)",
      JSON.stringify({ code: ok.code, outputs: ok.outputs, stdout: ok.stdout, stderr: ok.stderr }),
    );
    check(
      issuer.asked.length === 1 &&
        issuer.asked[0].audience === "deploy-platform" &&
        issuer.asked[0].authorization === `Bearer ${issuer.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN}` &&
        record.created_by === owner.id,
      "the runner's ID token is asked for with the audience and traded for a key of the trust's account",
      JSON.stringify({ asked: issuer.asked, created_by: record.created_by }),
    );
    const exchanged = ok.stdout.match(/^::add-mask::(dpk_\S+)$/m)?.[1];
    const everything = [ok.stdout, ok.stderr, ok.summary, JSON.stringify(ok.outputs)].join("\n");
    check(
      exchanged !== undefined && everything.split(exchanged).length === 2,
      "the exchanged key is masked (core.setSecret) before use, and printed nowhere else",
      ok.stdout,
    );
    const git = record.data.source?.git;
    check(
      git?.provider === "github" &&
        git.owner === "acme" &&
        git.repo === "storefront" &&
        git.repo_id === "700100" &&
        git.ref === "refs/heads/main" &&
        git.installation_id === "" &&
        git.commit.sha === ok.sha &&
        git.commit.message === "web: a faster checkout" &&
        git.commit.author.login === "ada" &&
        git.pull_request === undefined,
      "data.source.git is the workflow's commit (GITHUB_SHA, GITHUB_REF, GITHUB_REPOSITORY…, the push's head_commit)",
      JSON.stringify(record.data.source),
    );
    check(
      ok.summary.includes(`deployment ${d1.id} succeeded`) &&
        ok.summary.includes(`<code>${stagingStack.id}</code>`) &&
        ok.summary.includes("pulling registry.example/web:3f2c1e0") &&
        ok.summary.includes("&lt;a href=&quot;https://evil.example/&quot;&gt;dashboard&lt;/a&gt;") &&
        !/<a[\s>]/i.test(ok.summary) &&
        /<pre><code>/.test(ok.summary),
      "the job summary: the deployment, its stacks' statuses, the log's tail as escaped text (no link)",
      ok.summary,
    );
    const commands = commandLines(ok);
    check(
      commands.every((l) => /^::(add-mask|debug)::/.test(l)) &&
        ok.stdout.includes("::warning::from the engine"),
      "no line of the engine's log reaches the runner as a workflow command (each printed line is prefixed)",
      commands.join("\n"),
    );

    // 2. api-key: a promotion of it to production, which the engine fails.
    const promoting = runAction(dir, {
      url: `${base}/v1`,
      "api-key": key,
      environment: production,
      "promote-from": d1.id,
      timeout: "60",
    });
    const p = await created(production);
    await move(p.id, "in_progress", [{ id: productionStack.id, status: "in_progress" }]);
    await internal("POST", `/deployments/${p.id}/logs`, {
      lines: [{ message: "starting web" }, { message: "health check: 503", stream: "stderr" }],
    });
    await move(p.id, "failed", [
      { id: productionStack.id, status: "failed", status_reason: "health check failed" },
    ]);
    const failed = await promoting;
    check(
      failed.code !== 0 &&
        failed.code !== null &&
        new RegExp(`^::error::deployment ${p.id} failed`, "m").test(failed.stdout) &&
        failed.outputs["deployment-id"] === p.id &&
        failed.outputs.status === "failed" &&
        p.promoted_from === d1.id &&
        noTrace(failed),
      `promote-from: the promotion fails, so does the job (exit code ${failed.code}), outputs status failed`,
      JSON.stringify({
        code: failed.code,
        outputs: failed.outputs,
        stdout: failed.stdout,
        stderr: failed.stderr,
      }),
    );
    check(
      failed.summary.includes(`deployment ${p.id} failed`) &&
        failed.summary.includes("Promoted from") &&
        failed.summary.includes("<code>health check failed</code>") &&
        failed.summary.includes("! health check: 503"),
      "the failed promotion's summary: its stack's final status and reason, its log's tail",
      failed.summary,
    );

    // 3. Refusals, and a deployment no one moves (side by side: none needs the engine).
    const [conflict, unknown, deleted, late, unwaited] = await Promise.all([
      runAction(dir, { url: base, "api-key": key, environment: staging, "promote-from": p.id }),
      runAction(dir, { url: base, "api-key": key, environment: "1111111111111111111111" }),
      runAction(dir, { url: base, "trust-id": gone.id, environment: staging }, issuer.env),
      runAction(dir, { url: base, "api-key": key, environment: production, timeout: "1" }),
      runAction(dir, {
        url: base,
        "api-key": key,
        environment: production,
        "stack-ids": `\n${productionStack.id}\n`,
        source: JSON.stringify({ registry: { image: "registry.example/web:9" } }),
        wait: "false",
      }),
    ]);
    const refused = (r, code) =>
      r.code !== 0 &&
      new RegExp(`^::error::${code}: .+\\(HTTP \\d{3}, request \\S+\\)`, "m").test(r.stdout) &&
      noTrace(r) &&
      r.summary.includes("nothing deployed");
    check(
      refused(conflict, "conflict"),
      "promoting a failed deployment fails the step with the API's conflict, no stack trace",
      JSON.stringify(conflict),
    );
    check(
      refused(unknown, "not_found"),
      "an unknown environment fails the step with the API's not_found, no stack trace",
      JSON.stringify(unknown),
    );
    check(
      refused(deleted, "unauthenticated"),
      "a deleted trust fails the step with the exchange's unauthenticated, no stack trace",
      JSON.stringify(deleted),
    );
    check(
      late.code !== 0 &&
        /^::error::timed out after 1 s: \S+ is still queued/m.test(late.stdout) &&
        late.outputs.status === "queued" &&
        late.summary.includes("timed out after 1 s") &&
        noTrace(late),
      "a deployment not final within `timeout` fails the step (status queued)",
      JSON.stringify(late),
    );
    const made = unwaited.outputs["deployment-id"]
      ? await api("GET", `/deployments/${unwaited.outputs["deployment-id"]}`)
      : null;
    check(
      unwaited.code === 0 &&
        unwaited.outputs.status === "queued" &&
        made?.data.source?.registry?.image === "registry.example/web:9" &&
        made.data.source.git === undefined &&
        made.stack_ids.join() === productionStack.id &&
        unwaited.summary.includes(`deployment ${made.id} queued`),
      "wait: false ends the step once the deployment is created (status queued); source and stack-ids are sent as given",
      JSON.stringify({ unwaited, made }),
    );
    for (const r of [late, unwaited])
      if (r.outputs["deployment-id"]) await api("PATCH", `/deployments/${r.outputs["deployment-id"]}/cancel`);

    // 4. `check`: the step that ran a check concludes it (§31); the last pass releases the
    // deployment, and a deployment no longer waiting refuses (conflict).
    await api("PUT", `/environments/${staging}/protection`, {
      required_approvals: 0,
      reviewer_role: "owner",
      prevent_self_review: false,
      wait_timer: 0,
      concurrency: "parallel",
      checks: [{ name: "e2e", timeout: 600, on_timeout: "fail" }],
    });
    const gated = await internal("POST", `/environments/${staging}/deployments`, {
      stack_ids: [stagingStack.id],
      data: { patch: [] },
    });
    const conclude = (conclusion) =>
      runAction(dir, {
        url: base,
        "api-key": key,
        check: "e2e",
        deployment: gated.id,
        conclusion,
        "details-url": "https://ci.example.com/runs/7",
        summary: "412 tests green",
      });
    const passed = await conclude("passed");
    const after = await conclude("failed");
    const item = (await api("GET", `/deployments/${gated.id}`)).gate?.checks?.[0];
    check(
      gated.status === "waiting" &&
        passed.code === 0 &&
        passed.outputs["deployment-id"] === gated.id &&
        passed.outputs.status === "queued" &&
        item?.state === "passed" &&
        item.details_url === "https://ci.example.com/runs/7" &&
        item.summary === "412 tests green" &&
        refused(after, "conflict"),
      "check: concluding a waiting deployment's check releases it (outputs status queued); once it no longer waits, conflict",
      JSON.stringify({ gated, passed, after, item }),
    );
  } finally {
    await issuer.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { check, fail, done } = checker("check:action");
  const dir = mkdtempSync(join(tmpdir(), "check-action-"));
  let server;
  let log = "";
  try {
    server = await startDevServer(join(dir, "dev"));
    const adminToken = readFileSync(join(root, ".dev.vars"), "utf8")
      .match(/^ADMIN_TOKEN=(.*)$/m)?.[1]
      ?.trim();
    await checkAction({ base: server.base, adminToken, check, dir });
  } catch (err) {
    fail(err);
  } finally {
    log = server?.log() ?? log;
    server?.stop();
    await sleep(500);
    rmSync(dir, { recursive: true, force: true });
  }
  done(
    "the bundled GitHub Action deploys, promotes and fails as action.yml and its README say.",
    ` The server's output:\n${log}`,
  );
}
