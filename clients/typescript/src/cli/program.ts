/**
 * The `deploy-platform` command line, on yargs (argument parsing, `--help` for every command,
 * suggestions for typos, and bash/zsh completion from `deploy-platform completion`).
 */
import yargs, { type Argv } from "yargs";
import { registerAccount } from "./account.js";
import { registerAudit } from "./audit.js";
import { registerChecks } from "./checks.js";
import { Context, type GlobalArgs } from "./context.js";
import { registerDeployments } from "./deployments.js";
import { registerEnvironments } from "./environments.js";
import { EXIT, EXIT_CODES, type Io, reportError, UsageError } from "./io.js";
import { registerLogin } from "./login.js";
import { registerOrganization } from "./organization.js";
import { registerRelease } from "./release.js";
import { registerVariables } from "./variables.js";

export function buildProgram(args: string[], ctx: Context): Argv<GlobalArgs> {
  const program = yargs(args)
    .scriptName("deploy-platform")
    .usage(
      "$0 <command> [options]\n\nConfigured by DEPLOY_PLATFORM_URL and DEPLOY_PLATFORM_API_KEY (or --url, --api-key; or the key file `login` writes).",
    )
    .option("url", { type: "string", describe: "API base URL [env DEPLOY_PLATFORM_URL]", global: true })
    .option("api-key", { type: "string", describe: "API key [env DEPLOY_PLATFORM_API_KEY]", global: true })
    .option("json", { type: "boolean", describe: "Print JSON for scripts instead of tables", global: true })
    .epilogue(
      `Exit codes:\n${EXIT_CODES.map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning.replaceAll("`", "")}`).join("\n")}`,
    )
    .completion("completion", "Print a bash or zsh completion script")
    .demandCommand(1, "Name a command (see --help).")
    .recommendCommands()
    .strict()
    .help()
    .alias("help", "h")
    .version(ctx.version)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, error) => {
      // recommendCommands' message alone ("Did you mean list?") does not say what was wrong.
      throw error ?? new UsageError(/^Did you mean /.test(message) ? `no such command. ${message}` : message);
    });
  registerAccount(program, ctx);
  registerLogin(program, ctx);
  registerEnvironments(program, ctx);
  registerDeployments(program, ctx);
  registerRelease(program, ctx);
  registerVariables(program, ctx);
  registerOrganization(program, ctx);
  registerAudit(program, ctx);
  registerChecks(program, ctx);
  return program as unknown as Argv<GlobalArgs>;
}

/** Runs the command line `args`; answers the exit code. */
export async function run(args: string[], io: Io, version: string): Promise<number> {
  const ctx = new Context(io, version);
  const json = args.includes("--json");
  let output = "";
  try {
    await buildProgram(args, ctx).parseAsync(args, {}, (_err, _argv, text) => {
      output = text;
    });
  } catch (err) {
    const usage =
      err instanceof UsageError ? err : new UsageError(err instanceof Error ? err.message : String(err));
    reportError(io, json, usage);
    io.stderr.write("Run `deploy-platform --help` for usage.\n");
    return EXIT.usage;
  }
  if (output) io.stdout.write(output.endsWith("\n") ? output : `${output}\n`);
  return ctx.exitCode;
}
