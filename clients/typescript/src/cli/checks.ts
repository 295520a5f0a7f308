/**
 * `checks list <deployment>` and `checks conclude <deployment> <name> --passed | --failed`: the
 * checks a waiting deployment's gate holds, and a system that ran one reporting it (API_CONTRACT §31).
 */
import type { Argv } from "yargs";
import { unwrapData } from "../errors.js";
import type { Deployment } from "../types.js";
import type { Context, GlobalArgs } from "./context.js";
import { printJson, table, UsageError } from "./io.js";

type Gate = NonNullable<Deployment["gate"]>;

/** The gate's checks as a table: name, state, how (by timeout), when, details. */
export function checksTable(gate: Gate | null): string {
  const checks = gate?.checks ?? [];
  if (checks.length === 0) return "no checks\n";
  return table(
    ["CHECK", "STATE", "CONCLUDED", "DETAILS"],
    checks.map((c) => [
      c.name,
      c.reason === "timeout" ? `${c.state} (timed out)` : c.state,
      c.concluded_at,
      c.details_url ?? c.summary,
    ]),
  );
}

type ConcludeArgs = GlobalArgs & {
  deployment: string;
  name: string;
  passed?: boolean;
  failed?: boolean;
  detailsUrl?: string;
  summary?: string;
};

export function registerChecks(program: Argv, ctx: Context): void {
  program.command("checks", "A waiting deployment's checks: list them, conclude one", (y) =>
    y
      .command<GlobalArgs & { deployment: string }>(
        "list <deployment>",
        "List a deployment's checks and where each stands",
        (y) => y.positional("deployment", { type: "string", demandOption: true }),
        (args) =>
          ctx.run(args, async ({ client, json, io }) => {
            const d = unwrapData(
              await client.GET("/v1/deployments/{id}", { params: { path: { id: args.deployment } } }),
            );
            if (json) return printJson(io, d.gate?.checks ?? []);
            io.stdout.write(checksTable(d.gate));
            if (d.status === "waiting" && d.gate?.blocked_by.length)
              io.stderr.write(`${d.id} waiting on ${d.gate.blocked_by.join(", ")}\n`);
          }),
      )
      .command<ConcludeArgs>(
        "conclude <deployment> <name>",
        "Conclude a check: --passed (the last pass releases the deployment) or --failed (cancels it)",
        (y) =>
          y
            .positional("deployment", { type: "string", demandOption: true })
            .positional("name", { type: "string", demandOption: true })
            .option("passed", { type: "boolean", describe: "The check passed" })
            .option("failed", { type: "boolean", describe: "The check failed: the deployment is cancelled" })
            .option("details-url", { type: "string", describe: "An https:// URL of its details" })
            .option("summary", { type: "string", describe: "What it found (at most 1000 characters)" })
            .conflicts("passed", "failed"),
        (args) =>
          ctx.run(args, async ({ client, json, io }) => {
            if (!args.passed && !args.failed) throw new UsageError("say how it went: --passed or --failed");
            const d = unwrapData(
              await client.POST("/v1/deployments/{id}/checks/{name}", {
                params: { path: { id: args.deployment, name: args.name } },
                body: {
                  conclusion: args.passed ? "passed" : "failed",
                  ...(args.detailsUrl !== undefined ? { details_url: args.detailsUrl } : {}),
                  ...(args.summary !== undefined ? { summary: args.summary } : {}),
                },
              }),
            );
            if (json) return printJson(io, d);
            io.stdout.write(checksTable(d.gate));
            io.stderr.write(
              `${d.id} ${d.status}${d.gate?.blocked_by.length ? ` (waiting on ${d.gate.blocked_by.join(", ")})` : ""}\n`,
            );
          }),
      )
      .demandCommand(1, "Name a checks command (see --help)."),
  );
}
