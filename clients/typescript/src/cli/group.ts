/**
 * A command whose subcommands do the work (`environments list | get | …`). Its line in
 * `deploy-platform --help` ends with its subcommands' names, which test/help.test.ts holds equal
 * to those its own --help lists; without a subcommand it names them, and a mistyped one gets
 * the nearest (yargs' recommendCommands: `environments lsit` → "Did you mean list?"). Answers
 * `program`, so a group nests in another's chain (`audit streams`).
 */
import type { Argv } from "yargs";

export function commandGroup(
  program: Argv,
  name: string,
  summary: string,
  subcommands: readonly string[],
  build: (y: Argv) => Argv,
  /** How the command is typed from the top (`audit streams` for `streams` under `audit`). */
  path: string = name,
): Argv {
  const names = subcommands.join(", ");
  return program.command(name, `${summary}: ${names}`, (y) =>
    build(y).demandCommand(1, `${path} needs a command: ${names} (see ${path} --help).`).recommendCommands(),
  );
}
