/**
 * `environments list | get | create | rename | delete`, `lock`, `unlock`, `protection get | set`
 * (API_CONTRACT §23, §26): each one request of the typed client, or two for `protection set`
 * (the settings it is not given are read first, and written back only if unchanged since).
 */
import type { Argv } from "yargs";
import { unwrap, unwrapData } from "../errors.js";
import type { Environment, EnvironmentProtection, EnvironmentProtectionSettings } from "../types.js";
import type { Context, GlobalArgs } from "./context.js";
import { commandGroup } from "./group.js";
import { fields, type Io, printJson, table, UsageError } from "./io.js";
import { collect, type ListArgs, listOptions } from "./list.js";

type EnvArgs = GlobalArgs & { environment: string };
type ProtectionFlags = {
  requiredApprovals?: number;
  reviewerRole?: EnvironmentProtectionSettings["reviewer_role"];
  preventSelfReview?: boolean;
  waitTimer?: number;
  concurrency?: EnvironmentProtectionSettings["concurrency"];
};

const environmentId = <T>(y: Argv<T>) =>
  y.positional("environment", { type: "string", demandOption: true, describe: "The environment's ID" });

export function registerEnvironments(program: Argv, ctx: Context): void {
  commandGroup(
    program,
    "environments",
    "A project's environments",
    ["list", "get", "create", "rename", "delete"],
    (y) =>
      y
        .command<GlobalArgs & ListArgs & { project: string }>(
          "list",
          "List a project's environments, with the deployment each runs and whether a configuration change waits",
          (y) =>
            listOptions(y).option("project", {
              type: "string",
              demandOption: true,
              describe: "The project's ID",
            }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const list = await collect<Environment>(args, (after, limit) =>
                client.GET("/v1/projects/{project_id}/environments", {
                  params: { path: { project_id: args.project }, query: { after, limit } },
                }),
              );
              if (json) return printJson(io, list);
              io.stdout.write(
                table(
                  ["ID", "NAME", "CURRENT DEPLOYMENT", "CONFIG PENDING", "CREATED"],
                  list.data.map((e) => [
                    e.id,
                    e.name,
                    e.current_deployment_id,
                    e.config_pending ? "yes" : "no",
                    e.created_at,
                  ]),
                ),
              );
              if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
            }),
        )
        .command<EnvArgs>(["get <environment>", "show"], "Show an environment", environmentId, (args) =>
          ctx.run(args, async ({ client, json, io }) => {
            const env = unwrapData(
              await client.GET("/v1/environments/{environment_id}", {
                params: { path: { environment_id: args.environment } },
              }),
            );
            if (json) return printJson(io, env);
            printEnvironment(io, env);
          }),
        )
        .command<GlobalArgs & { name: string; project: string; copyVariablesFrom?: string }>(
          "create <name>",
          "Create an environment in a project, empty or starting with a copy of another environment's own variables",
          (y) =>
            y
              .positional("name", {
                type: "string",
                demandOption: true,
                describe: "Its name (unique in the project)",
              })
              .option("project", { type: "string", demandOption: true, describe: "The project's ID" })
              .option("copy-variables-from", {
                type: "string",
                describe: "An environment of the same project whose own variables it starts with",
              }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const env = unwrapData(
                await client.POST("/v1/projects/{project_id}/environments", {
                  params: { path: { project_id: args.project } },
                  body: {
                    name: args.name,
                    ...(args.copyVariablesFrom ? { copy_variables_from: args.copyVariablesFrom } : {}),
                  },
                }),
              );
              if (json) return printJson(io, env);
              io.stdout.write(`${env.id} ${env.name} created\n`);
            }),
        )
        .command<EnvArgs & { name: string }>(
          "rename <environment> <name>",
          "Rename an environment",
          (y) =>
            environmentId(y).positional("name", {
              type: "string",
              demandOption: true,
              describe: "Its new name",
            }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const env = unwrapData(
                await client.PATCH("/v1/environments/{environment_id}", {
                  params: { path: { environment_id: args.environment } },
                  body: { name: args.name },
                }),
              );
              if (json) return printJson(io, env);
              io.stdout.write(`${env.id} renamed ${env.name}\n`);
            }),
        )
        .command<EnvArgs>(
          "delete <environment>",
          "Delete an environment and everything in it (not the project's default, nor one with a deployment under way)",
          environmentId,
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              unwrap(
                await client.DELETE("/v1/environments/{environment_id}", {
                  params: { path: { environment_id: args.environment } },
                }),
              );
              if (json) return printJson(io, { id: args.environment, deleted: true });
              io.stdout.write(`deleted ${args.environment}\n`);
            }),
        ),
  );

  program.command<EnvArgs & { reason: string }>(
    "lock <environment>",
    "Lock an environment: new deployments wait and queued ones are held until it is unlocked",
    (y) =>
      environmentId(y).option("reason", {
        type: "string",
        demandOption: true,
        describe: "Why, for whoever finds it locked",
      }),
    (args) =>
      ctx.run(args, async ({ client, json, io }) => {
        const protection = unwrapData(
          await client.POST("/v1/environments/{environment_id}/lock", {
            params: { path: { environment_id: args.environment } },
            body: { reason: args.reason },
          }),
        );
        if (json) return printJson(io, protection);
        io.stdout.write(`locked ${args.environment}: ${protection.locked?.reason ?? args.reason}\n`);
      }),
  );

  program.command<EnvArgs>(
    "unlock <environment>",
    "Unlock an environment (locked or not); releases the deployments nothing else holds",
    environmentId,
    (args) =>
      ctx.run(args, async ({ client, json, io }) => {
        unwrap(
          await client.DELETE("/v1/environments/{environment_id}/lock", {
            params: { path: { environment_id: args.environment } },
          }),
        );
        if (json) return printJson(io, { environment_id: args.environment, locked: null });
        io.stdout.write(`unlocked ${args.environment}\n`);
      }),
  );

  commandGroup(
    program,
    "protection",
    "An environment's protection (approvals, wait timer, concurrency, lock)",
    ["get", "set"],
    (y) =>
      y
        .command<EnvArgs>(
          ["get <environment>", "show"],
          "Show an environment's protection",
          environmentId,
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const protection = unwrapData(
                await client.GET("/v1/environments/{environment_id}/protection", {
                  params: { path: { environment_id: args.environment } },
                }),
              );
              if (json) return printJson(io, protection);
              printProtection(io, protection);
            }),
        )
        .command<EnvArgs & ProtectionFlags>(
          "set <environment>",
          "Change an environment's protection; the settings not given stay as they are",
          (y) =>
            environmentId(y)
              .option("required-approvals", {
                type: "number",
                describe: "Approvals a deployment waits for (0–6)",
              })
              .option("reviewer-role", {
                type: "string",
                choices: ["owner", "contributor"] as const,
                describe: "The least project role that may review",
              })
              .option("prevent-self-review", {
                type: "boolean",
                describe:
                  "Whether a deployment's creator may not review it (--no-prevent-self-review allows it)",
              })
              .option("wait-timer", {
                type: "number",
                describe: "Seconds each new deployment waits (0–86400)",
              })
              .option("concurrency", {
                type: "string",
                choices: ["parallel", "serial", "supersede"] as const,
                describe: "How the environment's deployments overlap",
              }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const given: Partial<EnvironmentProtectionSettings> = {};
              if (args.requiredApprovals !== undefined) given.required_approvals = args.requiredApprovals;
              if (args.reviewerRole !== undefined) given.reviewer_role = args.reviewerRole;
              if (args.preventSelfReview !== undefined) given.prevent_self_review = args.preventSelfReview;
              if (args.waitTimer !== undefined) given.wait_timer = args.waitTimer;
              if (args.concurrency !== undefined) given.concurrency = args.concurrency;
              if (Object.keys(given).length === 0)
                throw new UsageError(
                  "name a setting to change: --required-approvals, --reviewer-role, --prevent-self-review, --wait-timer or --concurrency",
                );
              const path = { environment_id: args.environment };
              // The API replaces all five at once: the others are read here, and the write is refused
              // (409) rather than undo a change someone made in between.
              const read = await client.GET("/v1/environments/{environment_id}/protection", {
                params: { path },
              });
              const current = unwrapData(read);
              const etag = read.response.headers.get("etag");
              const protection = unwrapData(
                await client.PUT("/v1/environments/{environment_id}/protection", {
                  params: { path, header: etag ? { "If-Match": etag } : {} },
                  body: {
                    required_approvals: current.required_approvals,
                    reviewer_role: current.reviewer_role,
                    prevent_self_review: current.prevent_self_review,
                    wait_timer: current.wait_timer,
                    concurrency: current.concurrency,
                    ...given,
                  },
                }),
              );
              if (json) return printJson(io, protection);
              printProtection(io, protection);
            }),
        ),
  );
}

function printEnvironment(io: Io, e: Environment): void {
  io.stdout.write(
    fields([
      ["id", e.id],
      ["name", e.name],
      ["project", e.project_id],
      ["current deployment", e.current_deployment_id],
      ["config pending", e.config_pending ? "yes" : "no"],
      ["created", e.created_at],
      ["updated", e.updated_at],
    ]),
  );
}

function printProtection(io: Io, p: EnvironmentProtection): void {
  io.stdout.write(
    fields([
      ["environment", p.environment_id],
      ["required approvals", p.required_approvals],
      ["reviewer role", p.reviewer_role],
      ["prevent self review", p.prevent_self_review ? "yes" : "no"],
      ["wait timer", `${p.wait_timer} s`],
      ["concurrency", p.concurrency],
      ["locked", p.locked ? `${p.locked.reason} (by ${p.locked.account_id}, ${p.locked.at})` : "no"],
      ["updated", p.updated_at ?? "never"],
    ]),
  );
}
