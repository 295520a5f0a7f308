/**
 * The action's inputs (action.yml), read with @actions/core. What is checked here is only what the
 * action itself needs to know how to proceed (which credential, deploy or promote, JSON that
 * parses); whether an environment, a stack or a deployment will do is the service's to say.
 */
import * as core from "@actions/core";

/** A problem with the step's own configuration: reported as it is, no API was called. */
export class InputError extends Error {
  override name = "InputError";
}

export type Credentials =
  | { kind: "oidc"; trustId: string; audience: string }
  | { kind: "api-key"; apiKey: string };

/**
 * A check's conclusion (API_CONTRACT §31), instead of a deployment: a workflow step that ran a
 * check of a waiting deployment reports how it went.
 */
export type CheckConclusion = {
  deployment: string;
  check: string;
  conclusion: "passed" | "failed";
  detailsUrl?: string;
  summary?: string;
};

export type Inputs = {
  url: string;
  credentials: Credentials;
  /** Set: conclude this check, and nothing else. */
  concludes?: CheckConclusion;
  environment: string;
  /** A deployment to promote; absent: create one. */
  promoteFrom?: string;
  /** Only for a create: left out means every stack of the environment (the service's default). */
  stackIds?: string[];
  /** data.source as given; absent: the workflow's commit (source.ts). */
  source?: unknown;
  patch: unknown;
  wait: boolean;
  timeoutSeconds: number;
};

const text = (name: string): string | undefined => core.getInput(name) || undefined;

function json(name: string, what: "an object" | "an array"): unknown {
  const raw = text(name);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new InputError(`${name} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const ok =
    what === "an array"
      ? Array.isArray(value)
      : typeof value === "object" && value !== null && !Array.isArray(value);
  if (!ok) throw new InputError(`${name} must be ${what} in JSON`);
  return value;
}

export function readInputs(): Inputs {
  const url = text("url");
  if (!url) throw new InputError("url is required: the API's root, e.g. https://api.example.com");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError(`url ${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new InputError(`url must be http:// or https://, not ${parsed.protocol}`);

  const trustId = text("trust-id");
  const apiKey = text("api-key");
  // Masked before anything else could print it (a key passed without `secrets.` is not masked).
  if (apiKey) core.setSecret(apiKey);
  if (trustId && apiKey) throw new InputError("give trust-id or api-key, not both");
  let credentials: Credentials;
  if (trustId) credentials = { kind: "oidc", trustId, audience: text("audience") ?? "deploy-platform" };
  else if (apiKey) credentials = { kind: "api-key", apiKey };
  else
    throw new InputError(
      "no credentials: give trust-id (an OpenID Connect trust, with `permissions: id-token: write`) or api-key",
    );

  const check = text("check");
  if (check !== undefined) {
    return {
      url,
      credentials,
      concludes: readConclusion(check),
      environment: "",
      patch: [],
      wait: false,
      timeoutSeconds: 0,
    };
  }
  const environment = text("environment");
  if (!environment)
    throw new InputError(
      "environment is required: the id of the environment to deploy to (or give check, to conclude one)",
    );

  const promoteFrom = text("promote-from");
  const stackIds = text("stack-ids")
    ?.split(/[\s,]+/)
    .filter((id) => id !== "");
  const source = json("source", "an object");
  const patch = json("patch", "an array");
  if (promoteFrom !== undefined) {
    // A promotion takes the original's stacks (matched by template), patch and source: nothing is
    // rebuilt, so these inputs would be silently ignored.
    const given = [
      ["stack-ids", stackIds],
      ["source", source],
      ["patch", patch],
    ].filter(([, value]) => value !== undefined);
    if (given.length > 0)
      throw new InputError(
        `${given.map(([name]) => name).join(", ")}: not with promote-from (a promotion deploys the original's stacks, patch and source)`,
      );
  }

  const waitText = text("wait");
  const wait = waitText === undefined ? true : core.getBooleanInput("wait");
  const timeoutText = text("timeout") ?? "600";
  const timeoutSeconds = Number(timeoutText);
  if (!/^\s*\d+(\.\d+)?\s*$/.test(timeoutText) || !Number.isFinite(timeoutSeconds))
    throw new InputError(`timeout must be a number of seconds ≥ 0, not ${JSON.stringify(timeoutText)}`);

  return {
    url,
    credentials,
    environment,
    ...(promoteFrom !== undefined ? { promoteFrom } : {}),
    ...(stackIds !== undefined && stackIds.length > 0 ? { stackIds } : {}),
    ...(source !== undefined ? { source } : {}),
    patch: patch ?? [],
    wait,
    timeoutSeconds,
  };
}

/** The inputs of a check's conclusion: `check` with `deployment` and `conclusion`, and nothing of a deploy. */
function readConclusion(check: string): CheckConclusion {
  const deployment = text("deployment");
  if (!deployment)
    throw new InputError("deployment is required with check: the id of the deployment whose check this is");
  const conclusion = text("conclusion");
  if (conclusion !== "passed" && conclusion !== "failed")
    throw new InputError(
      `conclusion must be passed or failed with check, not ${JSON.stringify(conclusion ?? "")}`,
    );
  const deploying = ["environment", "stack-ids", "source", "patch", "promote-from"].filter((name) =>
    text(name),
  );
  if (deploying.length > 0)
    throw new InputError(
      `${deploying.join(", ")}: not with check (a check's step concludes it, and deploys nothing)`,
    );
  const detailsUrl = text("details-url");
  const summary = text("summary");
  return {
    deployment,
    check,
    conclusion,
    ...(detailsUrl !== undefined ? { detailsUrl } : {}),
    ...(summary !== undefined ? { summary } : {}),
  };
}
