/**
 * `variables export | import | versions | restore`: a scope's variables as one dotenv file, and
 * its history of versions (API_CONTRACT §18).
 */
import type { Argv } from "yargs";
import { unwrapData } from "../errors.js";
import type { VariableChangeRequest, VariableChangeResult, VariableVersion } from "../types.js";
import {
  applyVariableChanges,
  exportVariables,
  restoreVariableVersion,
  type VariableScope,
} from "../variables.js";
import type { Command, Context, GlobalArgs } from "./context.js";
import { commandGroup } from "./group.js";
import { fields, type Io, notice, printJson, table, UsageError } from "./io.js";
import { collect, type ListArgs, listOptions } from "./list.js";

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
  commandGroup(
    program,
    "variables",
    "A scope's variables as a .env file (import with a preview) and their versions",
    ["export", "import", "versions", "restore"],
    (y) =>
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
          "Apply a dotenv file (`-` for stdin) to the scope in one atomic change, after a preview that names the variables whose type it changes; --dry-run: the preview only",
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
              // An empty file (the export of an empty scope, say) is no change the API can make: a
              // change names 1–500 variables. Said here, in the file's terms, before any request.
              if (!dotenv.split(/\r?\n/).some((line) => line.trim() !== "" && !line.trim().startsWith("#")))
                throw new UsageError(
                  `${stdin ? "standard input" : args.file} holds no variables (only blank lines or comments): nothing to import`,
                );
              const body: VariableChangeRequest = {
                dotenv,
                mode: args.replace ? "replace" : "merge",
                dry_run: args.dryRun === true,
              };
              if (args.type) body.type = args.type;
              if (args.baseVersion !== undefined) body.base_version = args.baseVersion;
              // The preview first, always: what it would do to each name's type is said before
              // anything changes, and the change applied is the one previewed (at its version).
              const preview = await applyVariableChanges(
                client,
                scope,
                { ...body, dry_run: true },
                { signal: io.signal },
              );
              warnTypeChanges(io, json, preview, body.type ?? "secret", body.dry_run === true);
              if (body.dry_run) {
                if (json) return printJson(io, preview);
                return printChanges(io, preview);
              }
              const changes = preview.changes.some((c) => c.action !== "unchanged");
              const result = await applyVariableChanges(
                client,
                scope,
                { ...body, base_version: changes ? preview.version - 1 : preview.version },
                { signal: io.signal },
              );
              if (json) return printJson(io, result);
              printChanges(io, result);
            }),
        )
        .command<ScopeArgs & ListArgs & { number?: number }>(
          "versions [number]",
          "List the scope's versions, newest first (who changed which names, when; never a value), or show one",
          (y) =>
            listOptions(scopeOptions(y)).positional("number", {
              type: "number",
              describe: "Show this version only",
              coerce: versionNumber,
            }),
          (args) => ctx.run(args, (command) => versionsCommand(command, scopeOf(args), args)),
        )
        .command<ScopeArgs & { number: number; dryRun?: boolean }>(
          "restore <number>",
          "Make the scope's variables what they were right after a version, as a new version; --dry-run shows what it would change",
          (y) =>
            scopeOptions(y)
              .positional("number", {
                type: "number",
                demandOption: true,
                describe: "The version to go back to (see variables versions)",
                coerce: versionNumber,
              })
              .option("dry-run", {
                type: "boolean",
                describe: "Show the changes (never a value) and change nothing",
              }),
          (args) =>
            ctx.run(args, async ({ client, json, io }) => {
              const result = await restoreVariableVersion(client, scopeOf(args), args.number, {
                dryRun: args.dryRun === true,
                signal: io.signal,
              });
              if (json) return printJson(io, result);
              printChanges(io, result);
            }),
        ),
  );
}

/** A version is 1, 2, 3…: anything else is bad usage, said before any request. */
function versionNumber(value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isInteger(value) || value < 1) throw new UsageError("a version is a whole number ≥ 1");
  return value;
}

async function versionsCommand(
  { client, json, io }: Command,
  scope: VariableScope,
  args: ListArgs & { number?: number },
): Promise<void> {
  if (args.number !== undefined) {
    const version = args.number;
    const one = unwrapData(
      "environment" in scope
        ? await client.GET("/v1/environments/{environment_id}/variables/versions/{version}", {
            params: { path: { environment_id: scope.environment, version } },
          })
        : await client.GET("/v1/components/{component_id}/variables/versions/{version}", {
            params: { path: { component_id: scope.component, version } },
          }),
    );
    if (json) return printJson(io, one);
    io.stdout.write(
      fields([
        ["version", one.version],
        ["scope", `${one.scope.type} ${one.scope.id}`],
        ["created", one.created_at],
        ["by", actorOf(one)],
        ["request", one.request_id],
      ]),
    );
    if (one.changes.length > 0) {
      io.stdout.write("\n");
      io.stdout.write(
        table(
          ["ACTION", "NAME", "TYPE", "VALUE"],
          one.changes.map((c) => [
            c.action,
            c.name,
            typeChange(c),
            c.action === "updated" ? (c.value_changed ? "changed" : "same") : null,
          ]),
        ),
      );
    }
    return;
  }
  const list = await collect<VariableVersion>(args, (after, limit) =>
    "environment" in scope
      ? client.GET("/v1/environments/{environment_id}/variables/versions", {
          params: { path: { environment_id: scope.environment }, query: { after, limit } },
        })
      : client.GET("/v1/components/{component_id}/variables/versions", {
          params: { path: { component_id: scope.component }, query: { after, limit } },
        }),
  );
  if (json) return printJson(io, list);
  io.stdout.write(
    table(
      ["VERSION", "CREATED", "BY", "CHANGES"],
      list.data.map((v) => [v.version, v.created_at, actorOf(v), changeList(v)]),
    ),
  );
  if (list.next_page) io.stderr.write(`more: --after ${list.next_page} (or --all)\n`);
}

const actorOf = (v: VariableVersion): string =>
  v.actor.type === "admin" ? "admin" : `${v.actor.account_id ?? "-"} (key ${v.actor.api_key_id ?? "-"})`;

/** `+NEW ~CHANGED -GONE`: the names a version created, updated and deleted. */
const changeList = (v: VariableVersion): string =>
  v.changes
    .map((c) => `${c.action === "created" ? "+" : c.action === "deleted" ? "-" : "~"}${c.name}`)
    .join(" ");

type TypeChange = { action: string; type: { from: string | null; to: string | null } };

/** The storage type a change leaves, or `from → to` when it changed. */
function typeChange(c: TypeChange): string | null {
  if (c.action === "created") return c.type.to;
  if (c.action === "deleted" || c.type.from === c.type.to) return c.type.from;
  return `${c.type.from} → ${c.type.to}`;
}

/**
 * A dotenv file carries no types: every entry takes the import's one type (`--type`, default
 * secret), so a variable of another type changes type, silently as far as the file goes. Said on
 * stderr, by name, from the preview, before the change is applied (or as the dry run's answer).
 */
function warnTypeChanges(
  io: Io,
  json: boolean,
  preview: VariableChangeResult,
  type: string,
  dryRun: boolean,
): void {
  const retyped = preview.changes.filter(
    (c) => c.action === "updated" && c.type.from !== null && c.type.from !== c.type.to,
  );
  if (retyped.length === 0) return;
  const names = retyped.map((c) => `${c.name} (${c.type.from} → ${c.type.to})`).join(", ");
  const verb = dryRun ? "would change" : "changes";
  notice(
    io,
    json,
    "type_change",
    `warning: a dotenv file carries no types: every entry is imported as ${type} (--type), so this import ` +
      `${verb} the type of ${retyped.length === 1 ? "1 variable" : `${retyped.length} variables`}: ${names}. ` +
      "To keep each name's type, restore a version (`variables restore`) or apply a `variables` body built " +
      "from the scope's list (the API's PATCH {scope}/variables); --type sets one type for every entry.",
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
          typeChange(c),
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
