/**
 * The Deploy Platform GitHub Action (action.yml): create a deployment in an environment (API_CONTRACT
 * §23), or promote one that succeeded elsewhere (§25), follow it to its end (§19), and fail the
 * job unless it succeeded. Each step is a call of the typed client (clients/typescript/src);
 * whether something may be deployed or promoted is the service's to say, and its refusal fails
 * the step with the API's own code and message.
 *
 * Bundled into dist/index.js by `npm run action:build` (scripts/build-action.mjs).
 */
import * as core from "@actions/core";
import {
  ApiError,
  createDeployClient,
  type DeployClient,
  type Deployment,
  type DeploymentCreate,
  type PromotionPlan,
  StreamError,
  unwrapData,
} from "../../../clients/typescript/src/index.js";
import { apiKeyFor, IdTokenError } from "./auth.js";
import { type CheckConclusion, InputError, type Inputs, readInputs } from "./inputs.js";
import { workflowSource } from "./source.js";
import { type Report, writeSummary } from "./summary.js";
import { followToEnd, prefixed } from "./timeline.js";

const USER_AGENT = "deploy-platform-github-action";
/** Log lines the summary shows, at most. */
const SUMMARY_LINES = 30;

/** `approval (0 of 1), lock` for a deployment its environment's protection holds. */
function held(d: Deployment): string {
  if (d.status !== "waiting" || !d.gate || d.gate.blocked_by.length === 0) return "";
  const gate = d.gate;
  const what = gate.blocked_by.map((b) =>
    b === "approval"
      ? `approval (${gate.approvals} of ${gate.required_approvals})`
      : b === "wait_timer"
        ? `wait timer (until ${gate.wait_until})`
        : b === "check"
          ? `checks (${gate.checks.filter((c) => c.state === "passed").length} of ${gate.checks.length} passed: ${gate.checks
              .filter((c) => c.state !== "passed")
              .map((c) => c.name)
              .join(", ")} to go)`
          : "lock",
  );
  return `; waiting on ${what.join(", ")}`;
}

async function create(client: DeployClient, inputs: Inputs): Promise<Deployment> {
  const body: DeploymentCreate = {
    ...(inputs.stackIds ? { stack_ids: inputs.stackIds } : {}),
    // The shapes inside are the service's to check: it answers 400 naming what is wrong.
    data: {
      patch: inputs.patch as DeploymentCreate["data"]["patch"],
      source: (inputs.source ?? workflowSource()) as DeploymentCreate["data"]["source"],
    },
  };
  return unwrapData(
    await client.POST("/v1/environments/{environment_id}/deployments", {
      params: { path: { environment_id: inputs.environment } },
      body,
    }),
  );
}

const isPlan = (answer: PromotionPlan | Deployment): answer is PromotionPlan => "dry_run" in answer;

async function promote(client: DeployClient, from: string, environment: string): Promise<Deployment> {
  const path = { id: from };
  // The plan first, for the log: how the stacks map, which variable names the target lacks.
  const plan = unwrapData(
    await client.POST("/v1/deployments/{id}/promote", {
      params: { path },
      body: { environment_id: environment, dry_run: true },
    }),
  );
  if (isPlan(plan)) {
    for (const s of plan.stacks) core.info(`stack ${s.from} → ${s.to}`);
    for (const v of plan.variables) {
      const scope = v.scope.type === "environment" ? "the environment" : `component ${v.scope.name}`;
      if (v.missing.length > 0)
        core.warning(
          `${environment} lacks, in ${scope}, variables ${from} was deployed with: ${v.missing.join(", ")}`,
        );
      if (v.extra.length > 0) core.info(`${environment} has, in ${scope}, more: ${v.extra.join(", ")}`);
    }
  }
  const created = unwrapData(
    await client.POST("/v1/deployments/{id}/promote", {
      params: { path },
      body: { environment_id: environment },
    }),
  );
  if (isPlan(created)) throw new Error("the promotion answered a plan, not a deployment");
  return created;
}

/** Concludes a check of a waiting deployment (§31); the deployment as the conclusion left it. */
async function concludeCheck(client: DeployClient, c: CheckConclusion): Promise<Deployment> {
  const deployment = unwrapData(
    await client.POST("/v1/deployments/{id}/checks/{name}", {
      params: { path: { id: c.deployment, name: c.check } },
      body: {
        conclusion: c.conclusion,
        ...(c.detailsUrl !== undefined ? { details_url: c.detailsUrl } : {}),
        ...(c.summary !== undefined ? { summary: c.summary } : {}),
      },
    }),
  );
  core.info(`check ${c.check} ${c.conclusion}: ${deployment.id} ${deployment.status}${held(deployment)}`);
  return deployment;
}

/** An error as the step's failure message: the API's code and message, never a stack trace. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    const where = `HTTP ${err.status}${err.requestId ? `, request ${err.requestId}` : ""}`;
    const causes = Array.isArray(err.body.cause)
      ? err.body.cause.map((item: unknown) =>
          typeof item === "object" && item !== null && "message" in item
            ? `${"path" in item ? `${String(item.path)}: ` : ""}${String(item.message)}`
            : JSON.stringify(item),
        )
      : [];
    return [`${err.body.code}: ${err.body.message} (${where})`, ...causes.map((c) => `  ${c}`)].join("\n");
  }
  if (err instanceof InputError || err instanceof IdTokenError || err instanceof StreamError)
    return err.message;
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  if (err instanceof TypeError && /fetch/i.test(message)) return `cannot reach the API: ${message}${cause}`;
  return `${message}${cause}`;
}

export async function run(): Promise<void> {
  const report: Report = {};
  try {
    const inputs = readInputs();
    const apiKey = await apiKeyFor(inputs.url, inputs.credentials, USER_AGENT);
    const client = createDeployClient({
      baseUrl: inputs.url,
      apiKey,
      headers: { "user-agent": USER_AGENT },
      onRetry: ({ response, delayMs }) =>
        core.info(
          `${response ? `HTTP ${response.status}` : "no answer"}; retrying in ${Math.ceil(delayMs / 1000)} s`,
        ),
    });

    let deployment: Deployment;
    if (inputs.concludes) {
      report.deployment = deployment = await concludeCheck(client, inputs.concludes);
      core.setOutput("deployment-id", deployment.id);
      core.setOutput("status", deployment.status);
      return;
    }
    if (inputs.promoteFrom !== undefined) {
      report.promotedFrom = inputs.promoteFrom;
      deployment = await promote(client, inputs.promoteFrom, inputs.environment);
      core.info(
        `${deployment.id} ${deployment.status}${held(deployment)} (promoted from ${inputs.promoteFrom})`,
      );
    } else {
      deployment = await create(client, inputs);
      core.info(`${deployment.id} ${deployment.status}${held(deployment)}`);
    }
    report.deployment = deployment;
    core.setOutput("deployment-id", deployment.id);
    core.setOutput("status", deployment.status);
    if (!inputs.wait) return;

    report.waited = true;
    report.timeoutSeconds = inputs.timeoutSeconds;
    const result = await followToEnd(client, deployment.id, {
      timeoutSeconds: inputs.timeoutSeconds,
      keep: SUMMARY_LINES,
      print: (line) => core.info(line),
    });
    report.deployment = deployment = result.deployment;
    report.logs = result.logs;
    report.timedOut = result.timedOut;
    core.setOutput("status", deployment.status);
    if (result.timedOut) {
      report.failure = `timed out after ${inputs.timeoutSeconds} s: ${deployment.id} is still ${deployment.status}${held(deployment)} (it goes on; the action does not cancel it)`;
      core.setFailed(report.failure);
    } else if (deployment.status !== "succeeded") {
      const reasons = (deployment.data.stacks ?? [])
        .filter((s) => s.status_reason)
        .map((s) => prefixed("  ", `stack ${s.id} ${s.status}: ${s.status_reason}`));
      core.setFailed([`deployment ${deployment.id} ${deployment.status}`, ...reasons].join("\n"));
    } else core.info(`deployment ${deployment.id} succeeded`);
  } catch (err) {
    report.failure = describe(err);
    core.setFailed(report.failure);
  } finally {
    await writeSummary(report);
  }
}
