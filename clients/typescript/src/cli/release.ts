/**
 * A release's way to production (API_CONTRACT §23–§26): `deploy` (create a deployment in an
 * environment and follow it), `promote` (the plan, a question, the promotion), `approve` and
 * `reject`, `config show | diff`. Each is the typed client's request; what may be deployed,
 * promoted or reviewed is the service's to say, and its refusal is printed as it gives it.
 */
import type { Argv } from "yargs";
import { unwrapData } from "../errors.js";
import type { Deployment, DeploymentConfigDiff, DeploymentCreate, PromotionPlan } from "../types.js";
import type { Command, Context, GlobalArgs } from "./context.js";
import { followCommand, gateText, timeoutOption } from "./deployments.js";
import { commandGroup } from "./group.js";
import { EXIT, fields, type Io, printJson, table, UsageError } from "./io.js";

type DeployArgs = GlobalArgs & {
  environment: string;
  stackIds?: string[];
  patch?: string;
  source?: string;
  image?: string;
  file?: string;
  follow: boolean;
  timeout: number;
};

type PromoteArgs = GlobalArgs & {
  deployment: string;
  to: string;
  dryRun?: boolean;
  yes?: boolean;
  follow?: boolean;
  timeout: number;
};

const deploymentId = <T>(y: Argv<T>) =>
  y.positional("deployment", { type: "string", demandOption: true, describe: "The deployment's ID" });

export function registerRelease(program: Argv, ctx: Context): void {
  program.command<DeployArgs>(
    "deploy <environment>",
    "Start a deployment in an environment and follow it to its end (exit codes as follow)",
    (y) =>
      timeoutOption(y, "follow")
        .positional("environment", { type: "string", demandOption: true, describe: "The environment's ID" })
        .option("stack-ids", {
          type: "string",
          array: true,
          describe:
            "The stacks to deploy (repeat, or comma-separated; default: every stack of the environment)",
        })
        .option("patch", { type: "string", describe: "data.patch: a JSON array of RFC 6902 operations" })
        .option("source", { type: "string", describe: "data.source: a JSON object ({git} or {registry})" })
        .option("image", {
          type: "string",
          describe: 'Shorthand for --source \'{"registry":{"image":IMAGE}}\'',
        })
        .option("file", {
          type: "string",
          nargs: 1, // so that `--file -` takes the `-`
          describe:
            "A JSON file (- for stdin) holding the body: {stack_ids?, data: {patch, source?}}; flags override it",
        })
        .option("follow", {
          type: "boolean",
          default: true,
          describe: "Follow it to its end (--no-follow: print it and exit)",
        })
        .conflicts("source", "image"),
    (args) =>
      ctx.run(args, async (command) => {
        const { client, json, io } = command;
        const body = await deploymentBody(io, args);
        const created = unwrapData(
          await client.POST("/v1/environments/{environment_id}/deployments", {
            params: { path: { environment_id: args.environment } },
            body,
          }),
        );
        if (!args.follow) {
          if (json) return printJson(io, created);
          io.stdout.write(`${created.id} ${created.status}${held(created)}\n`);
          return;
        }
        if (!json) io.stderr.write(`${created.id} ${created.status}${held(created)}; following it\n`);
        return followCommand(command, created.id, args.timeout, undefined);
      }),
  );

  program.command<PromoteArgs>(
    "promote <deployment>",
    "Promote a succeeded deployment to another environment: prints the plan, asks, then promotes",
    (y) =>
      timeoutOption(deploymentId(y), "follow (with --follow)")
        .option("to", { type: "string", demandOption: true, describe: "The target environment's ID" })
        .option("dry-run", { type: "boolean", describe: "Print the plan only" })
        .option("yes", { alias: "y", type: "boolean", describe: "Promote without asking (CI)" })
        .option("follow", {
          type: "boolean",
          describe: "Then follow the new deployment (exit codes as follow)",
        })
        .conflicts("dry-run", "yes"),
    (args) => ctx.run(args, (command) => promoteCommand(command, args)),
  );

  for (const [name, state, verb] of [
    ["approve", "approved", "Approve"],
    ["reject", "rejected", "Reject (and so cancel)"],
  ] as const) {
    program.command<GlobalArgs & { deployment: string; comment?: string }>(
      `${name} <deployment>`,
      `${verb} a deployment that waits for approval`,
      (y) => deploymentId(y).option("comment", { type: "string", describe: "Why (up to 1000 characters)" }),
      (args) =>
        ctx.run(args, async ({ client, json, io }) => {
          const d = unwrapData(
            await client.POST("/v1/deployments/{id}/reviews", {
              params: { path: { id: args.deployment } },
              body: { state, ...(args.comment !== undefined ? { comment: args.comment } : {}) },
            }),
          );
          if (json) return printJson(io, d);
          io.stdout.write(`${d.id} ${state}: now ${d.status}${held(d)}\n`);
        }),
    );
  }

  commandGroup(
    program,
    "config",
    "The configuration a deployment runs with, or what changed since",
    ["show", "diff"],
    (y) =>
      y
        .command<GlobalArgs & { deployment: string }>(
          ["show <deployment>", "get"],
          "The variable names and types each scope held at the versions the deployment pins (never a value)",
          deploymentId,
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const config = unwrapData(
                await client.GET("/v1/deployments/{id}/config", {
                  params: { path: { id: args.deployment } },
                }),
              );
              if (json) return printJson(io, config);
              const scopes = [
                { scope: `environment ${config.environment.id}`, ...config.environment },
                ...config.components.map((c) => ({ scope: `component ${c.name} (${c.id})`, ...c })),
              ];
              io.stdout.write(
                table(
                  ["SCOPE", "VERSION", "NAME", "TYPE"],
                  scopes.flatMap((s) =>
                    s.variables.length === 0
                      ? [[s.scope, s.version, null, null]]
                      : s.variables.map((v) => [s.scope, s.version, v.name, v.type]),
                  ),
                ),
              );
            }),
        )
        .command<GlobalArgs & { deployment: string; against?: string }>(
          "diff <deployment>",
          "What changed from the deployment's configuration to the scopes as they are now, or to another deployment's",
          (y) =>
            deploymentId(y).option("against", {
              type: "string",
              describe: "`current` (default) or another deployment's ID of the same environment",
            }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const diff = unwrapData(
                await client.GET("/v1/deployments/{id}/config/diff", {
                  params: {
                    path: { id: args.deployment },
                    query: args.against === undefined ? {} : { against: args.against },
                  },
                }),
              );
              if (json) return printJson(io, diff);
              printDiff(io, diff);
            }),
        ),
  );
}

/** `; waiting on approval (0 of 1)` for a deployment a gate holds, else nothing. */
function held(d: Deployment): string {
  return d.status === "waiting" && d.gate ? `; waiting on ${gateText(d.gate)}` : "";
}

/** The body of `deploy`: the file's, then each flag given in its place. */
async function deploymentBody(io: Io, args: DeployArgs): Promise<DeploymentCreate> {
  let body: Record<string, unknown> = {};
  if (args.file !== undefined) {
    // yargs hands a lone `-` over as an empty string.
    const stdin = args.file === "-" || args.file === "";
    const text = stdin ? await io.readStdin() : await io.readFile(args.file);
    const parsed = parseJson(text, stdin ? "standard input" : args.file);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new UsageError(
        `${args.file || "standard input"} must hold a JSON object: {stack_ids?, data: {patch, source?}}`,
      );
    body = parsed as Record<string, unknown>;
  }
  const data: Record<string, unknown> =
    typeof body.data === "object" && body.data !== null ? { ...(body.data as Record<string, unknown>) } : {};
  if (args.patch !== undefined) data.patch = parseJson(args.patch, "--patch");
  if (args.source !== undefined) data.source = parseJson(args.source, "--source");
  if (args.image !== undefined) data.source = { registry: { image: args.image } };
  data.patch ??= [];
  const stackIds = args.stackIds?.flatMap((s) => s.split(",")).filter((s) => s !== "");
  if (stackIds !== undefined && stackIds.length > 0) body.stack_ids = stackIds;
  // The shapes inside are the service's to check: it answers 400 with the path of what is wrong.
  return { ...body, data } as DeploymentCreate;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The promote operation answers a plan (200, dry run) or the new deployment (201). */
const isPlan = (answer: PromotionPlan | Deployment): answer is PromotionPlan => "dry_run" in answer;

async function promoteCommand(command: Command, args: PromoteArgs): Promise<unknown> {
  const { client, json, io } = command;
  const path = { id: args.deployment };
  const plan = unwrapData(
    await client.POST("/v1/deployments/{id}/promote", {
      params: { path },
      body: { environment_id: args.to, dry_run: true },
    }),
  );
  if (!isPlan(plan)) throw new Error("the promotion's dry run answered a deployment, not a plan");
  if (args.dryRun) {
    if (json) return printJson(io, plan);
    io.stdout.write(planText(args.deployment, plan));
    io.stdout.write("dry run: nothing was promoted\n");
    return;
  }
  if (!args.yes) {
    // The plan is what the question is about: on the terminal, whatever --json says.
    (json ? io.stderr : io.stdout).write(planText(args.deployment, plan));
    if (!io.ask) {
      io.stderr.write(
        "error: not promoted: promote asks before it promotes, and standard input is not a terminal; " +
          "pass --yes to promote without asking (or --dry-run to print the plan only)\n",
      );
      return EXIT.usage;
    }
    const answer = (await io.ask(`Promote ${args.deployment} to ${args.to}? [y/N] `)).trim().toLowerCase();
    if (answer !== "y" && answer !== "yes") {
      io.stderr.write("not promoted\n");
      return EXIT.usage;
    }
  }
  const created = unwrapData(
    await client.POST("/v1/deployments/{id}/promote", {
      params: { path },
      body: { environment_id: args.to },
    }),
  );
  if (isPlan(created)) throw new Error("the promotion answered a plan, not a deployment");
  if (json) {
    const both = { plan, deployment: created };
    if (!args.follow) return printJson(io, both);
    io.stdout.write(`${JSON.stringify(both)}\n`);
  } else {
    if (args.yes) io.stdout.write(planText(args.deployment, plan));
    const line = `${created.id} ${created.status}${held(created)} (promoted from ${args.deployment})\n`;
    (args.follow ? io.stderr : io.stdout).write(line);
  }
  if (args.follow) return followCommand(command, created.id, args.timeout, undefined);
}

/** The plan as a person reads it: the stacks' mapping, then the names each scope lacks or adds. */
export function planText(from: string, plan: PromotionPlan): string {
  const lines = [`promote ${from} to ${plan.environment_id}`, ""];
  lines.push(
    table(
      ["STACK", "TO"],
      plan.stacks.map((s) => [s.from, s.to]),
    ).trimEnd(),
    "",
  );
  if (plan.variables.length === 0) lines.push("variables: every scope has the same names", "");
  else {
    lines.push(
      table(
        ["SCOPE", "MISSING IN TARGET", "EXTRA IN TARGET"],
        plan.variables.map((v) => [
          v.scope.type === "environment" ? "environment" : `component ${v.scope.name}`,
          v.missing.join(" ") || null,
          v.extra.join(" ") || null,
        ]),
      ).trimEnd(),
      "",
    );
  }
  return lines.join("\n");
}

function printDiff(io: Io, diff: DeploymentConfigDiff): void {
  io.stdout.write(
    fields([
      ["deployment", diff.deployment_id],
      ["against", diff.against],
    ]),
  );
  if (diff.changes.length === 0) {
    io.stdout.write("no change\n");
    return;
  }
  io.stdout.write("\n");
  io.stdout.write(
    table(
      ["SCOPE", "ACTION", "NAME", "TYPE", "VALUE"],
      diff.changes.map((c) => [
        c.scope.type === "environment" ? "environment" : `component ${c.scope.id}`,
        c.action,
        c.name,
        c.action === "created"
          ? c.type.to
          : c.action === "deleted" || c.type.from === c.type.to
            ? c.type.from
            : `${c.type.from} → ${c.type.to}`,
        c.action === "updated" ? (c.value_changed ? "changed" : "same") : null,
      ]),
    ),
  );
}
