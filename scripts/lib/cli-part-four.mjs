// Part four from the CLI (`npm run check:cli`, scripts/check-cli.mjs), on the real server: a
// release's way to production (API_CONTRACT §23–§26: environments, deploy, config, promote with an
// approval by a second admin and a rejection, protection, lock; then part five's checks,
// ./cli-part-five.mjs) and `login --oidc` (§27) with the runner's ID-token endpoint and an issuer
// of ./oidc-issuer.mjs. Every answer comes from the real service.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { partFiveChecks } from "./cli-part-five.mjs";
import { startIssuer } from "./oidc-issuer.mjs";

/** The operations of a release's way to production that the CLI's commands call (§23–§26). */
const RELEASE_OPS = [
  ["/v1/projects/{project_id}/environments", "post"],
  ["/v1/environments/{environment_id}/deployments", "post"],
  ["/v1/deployments/{id}/config/diff", "get"],
  ["/v1/deployments/{id}/promote", "post"],
  ["/v1/deployments/{id}/reviews", "post"],
  ["/v1/environments/{environment_id}/protection", "put"],
  ["/v1/environments/{environment_id}/lock", "post"],
];

/**
 * The release's way from the command line, then `login --oidc`, each where /openapi.json documents
 * what it calls. `world`: what scripts/check-cli.mjs made (the bin, the demo project and its
 * deployments, the internal API).
 */
export async function partFourChecks(world) {
  const missing = RELEASE_OPS.filter(([path, method]) => !world.serves(path, method));
  if (missing.length === 0) await releaseChecks(world);
  else
    world.undocumented(
      "environments, deploy, promote, approve, lock, protection, config",
      `the service does not document ${missing.map(([p, m]) => `${m.toUpperCase()} ${p}`).join(", ")} yet (API_CONTRACT §23–§26)`,
    );
  if (world.serves("/v1/oidc/token", "post")) await loginChecks(world);
  else
    world.undocumented(
      "login --oidc",
      "the service does not document POST /v1/oidc/token (API_CONTRACT §27)",
    );
}

/**
 * `login --oidc` as a GitHub Actions job runs it: the key written to a file of mode 600 and to
 * $GITHUB_ENV, never printed; later commands use it. `cli` runs the installed bin in `scratch`
 * with the demo `key`; `base` is the server's URL.
 */
async function loginChecks({ cli, check, base, key, scratch }) {
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

/**
 * Environments, deploy, config, promote, approve and reject, protection, lock, then part five's
 * checks, in the demo `project` (its default environment `envId`). `internal` calls the internal
 * API (the engine's moves); `failed` is a deployment that failed, which promotion refuses.
 */
async function releaseChecks(world) {
  const { cli, check, base, key, internal, project, envId, failed, scratch } = world;
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
  // The copy holds the source's variables, by name (part three left some there).
  const variableNames = async (environment) => {
    const res = await fetch(`${base}/v1/environments/${environment}/variables?limit=240`, {
      headers: { "x-api-key": key },
    });
    return res.ok ? ((await res.json()).data ?? []).map((v) => v.name).sort() : [`${res.status}`];
  };
  const [source, copied] = await Promise.all([variableNames(envId), variableNames(staging?.id)]);
  check(
    staging?.name === "cli-staging" &&
      prodMade.code === 0 &&
      prod !== undefined &&
      source.length > 0 &&
      copied.join() === source.join(),
    `environments create (--copy-variables-from: ${copied.length} variables, the source's) and list`,
    JSON.stringify([made, prodMade, listed, { source, copied }]),
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
    await sleep(200);
    const page = await (
      await fetch(`${base}/v1/environments/${staging.id}/deployments`, { headers: { "x-api-key": key } })
    ).json();
    dep = page.data?.[0];
  }
  await internal("PATCH", `/deployments/${dep.id}`, { status: "in_progress" });
  await internal("POST", `/deployments/${dep.id}/logs`, { lines: [{ message: "pulling web:9" }] });
  await sleep(300);
  await internal("PATCH", `/deployments/${dep.id}`, { status: "succeeded" });
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
  const refused = await cli(["promote", failed.id, "--to", prod.id, "--yes"]);
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
  await partFiveChecks({ ...world, json, environment: prod.id });

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
