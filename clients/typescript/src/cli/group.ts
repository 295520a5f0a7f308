/**
 * A command whose subcommands do the work (`environments list | get | …`). Its line in
 * `deploy-platform --help` ends with its subcommands' names, which test/cli.test.ts holds equal
 * to those its own --help lists; without a subcommand it names them, and a mistyped one gets
 * the nearest (yargs' recommendCommands: `environments lsit` → "Did you mean list?").
 */
import type { Argv } from "yargs";

export function commandGroup(
  program: Argv,
  name: string,
  summary: string,
  subcommands: readonly string[],
  build: (y: Argv) => Argv,
): void {
  const names = subcommands.join(", ");
  program.command(name, `${summary}: ${names}`, (y) =>
    build(y).demandCommand(1, `${name} needs a command: ${names} (see ${name} --help).`).recommendCommands(),
  );
}
