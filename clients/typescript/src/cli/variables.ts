/** `variables export | import`: a scope's variables as one dotenv file (API_CONTRACT §18). */
import type { Argv } from "yargs";
import type { VariableChangeRequest, VariableChangeResult } from "../types.js";
import { applyVariableChanges, exportVariables, type VariableScope } from "../variables.js";
import type { Context, GlobalArgs } from "./context.js";
import { type Io, printJson, table, UsageError } from "./io.js";

type ScopeArgs = GlobalArgs & { environment?: string; component?: string };
const TYPES = ["secret", "secure_string", "string"] as const;

function scopeOptions<T>(y: Argv<T>): Argv<T & { environment?: string; component?: string }> {
  return y
    .option("environment", { type: "string", describe: "The environment whose own variables to use" })
    .option("component", { type: "string", describe: "The component whose variables to use" })
    .conflicts("environment", "component") as Argv<T & { environment?: string; component?: string }>;
}

function scopeOf(args: ScopeArgs): VariableScope {
  if (args.environment) return { environment: args.environment };
  if (args.component) return { component: args.component };
  throw new UsageError("name the scope: --environment <id> or --component <id>");
}

export function registerVariables(program: Argv, ctx: Context): void {
  program.command("variables", "A scope's variables as a .env file: export, import (with a preview)", (y) =>
    y
      .command<ScopeArgs & { output?: string }>(
        "export",
        "Print the scope's variables as a dotenv file (values revealed; the export is audited)",
        (y) =>
          scopeOptions(y).option("output", {
            alias: "o",
            type: "string",
            describe: "Write to this file (mode 600) instead of stdout",
          }),
        (args) =>
          ctx.run(args, async ({ client, io }) => {
            const scope = scopeOf(args);
            const text = await exportVariables(client, scope, { signal: io.signal });
            if (args.output === undefined || args.output === "-") io.stdout.write(text);
            else {
              await io.writePrivateFile(args.output, text);
              io.stderr.write(`wrote ${countLines(text)} variables to ${args.output}\n`);
            }
          }),
      )
      .command<
        ScopeArgs & {
          file: string;
          dryRun?: boolean;
          replace?: boolean;
          type?: (typeof TYPES)[number];
          baseVersion?: number;
        }
      >(
        "import <file>",
        "Apply a dotenv file (`-` for stdin) to the scope in one atomic change; --dry-run shows what it would change",
        (y) =>
          scopeOptions(y)
            .positional("file", {
              type: "string",
              demandOption: true,
              describe: "A .env file, or - for stdin",
            })
            .option("dry-run", {
              type: "boolean",
              describe: "Show the changes (never a value) and change nothing",
            })
            .option("replace", {
              type: "boolean",
              describe: "The scope ends holding exactly the file's names (others are deleted)",
            })
            .option("type", {
              type: "string",
              choices: TYPES,
              describe: "Storage type of every imported variable (default secret)",
            })
            .option("base-version", {
              type: "number",
              describe: "Refuse (409) unless the scope is still at this version",
            }),
        (args) =>
          ctx.run(args, async ({ client, json, io }) => {
            const scope = scopeOf(args);
            // yargs hands a lone `-` over as an empty string.
            const stdin = args.file === "-" || args.file === "";
            const dotenv = stdin ? await io.readStdin() : await io.readFile(args.file);
            const body: VariableChangeRequest = {
              dotenv,
              mode: args.replace ? "replace" : "merge",
              dry_run: args.dryRun === true,
            };
            if (args.type) body.type = args.type;
            if (args.baseVersion !== undefined) body.base_version = args.baseVersion;
            const result = await applyVariableChanges(client, scope, body, { signal: io.signal });
            if (json) return printJson(io, result);
            printChanges(io, result);
          }),
      )
      .demandCommand(1, "Name a variables command (see --help)."),
  );
}

const countLines = (text: string) => text.split("\n").filter((l) => l.trim() !== "").length;

/** The change result as a table and a summary: names, actions and types, never a value. */
function printChanges(io: Io, result: VariableChangeResult): void {
  const changed = result.changes.filter((c) => c.action !== "unchanged");
  if (changed.length > 0) {
    io.stdout.write(
      table(
        ["ACTION", "NAME", "TYPE", "VALUE"],
        changed.map((c) => [
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
  const count = (action: string) => result.changes.filter((c) => c.action === action).length;
  const summary = `${count("created")} created, ${count("updated")} updated, ${count("deleted")} deleted, ${count("unchanged")} unchanged`;
  if (result.dry_run)
    io.stdout.write(
      changed.length === 0
        ? `dry run: no change (the scope stays at version ${result.version})\n`
        : `dry run: would make version ${result.version}: ${summary}; nothing was changed\n`,
    );
  else
    io.stdout.write(
      changed.length === 0
        ? `no change (version ${result.version})\n`
        : `version ${result.version}: ${summary}\n`,
    );
}
