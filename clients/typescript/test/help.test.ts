/**
 * What `deploy-platform --help` says against what the CLI does: each command of commands names, on
 * its line of the top-level help, exactly the subcommands its own --help lists (in that order);
 * every `get` answers to `show` too (and `config show` to `get`); without a subcommand, or with a
 * mistyped one, the CLI names what there is or the nearest, and exits 10.
 */
import { describe, expect, it } from "vitest";
import { run } from "../src/cli/program.js";
import { fakeIo } from "./fake-api.js";

const NOWHERE = "http://127.0.0.1:1";

async function helpOf(args: string[]): Promise<string> {
  const t = fakeIo(NOWHERE);
  expect(await run([...args, "--help"], t.io, "0.0.0")).toBe(0);
  return t.stdout();
}

/** The command lines of a help text (`deploy-platform <path> <name> …  description`), as [name, rest]. */
function commandLines(help: string, path: string[]): Array<[string, string]> {
  const prefix = ["deploy-platform", ...path].join(" ");
  const section = help.slice(help.indexOf("Commands:"), help.indexOf("Options:"));
  const lines: Array<[string, string]> = [];
  for (const line of section.split("\n")) {
    const m = /^ {2}(\S.*?)(?: {2,}(.*))?$/.exec(line);
    if (!m?.[1]?.startsWith(`${prefix} `)) {
      // A wrapped description continues the command line above it.
      const last = lines[lines.length - 1];
      if (last && line.trim() !== "") last[1] = `${last[1]} ${line.trim()}`;
      continue;
    }
    const name = m[1].slice(prefix.length + 1).split(" ")[0] ?? "";
    lines.push([name, m[2] ?? ""]);
  }
  return lines;
}

describe("deploy-platform --help and the commands", () => {
  it("each command of commands names, on its help line, exactly the subcommands its --help lists", async () => {
    /** The commands of commands under `path`, at any depth, each checked against its own --help. */
    async function groupsUnder(path: string[]): Promise<string[]> {
      const lines = commandLines(await helpOf(path), path);
      const groups = lines.filter(([, text]) => /: [a-z]+(, [a-z]+)*$/.test(text) && !text.includes("<"));
      const found: string[] = [];
      for (const [name, text] of groups) {
        const at = [...path, name];
        const named = text.slice(text.lastIndexOf(": ") + 2).split(", ");
        const listed = commandLines(await helpOf(at), at).map(([sub]) => sub);
        expect(listed, at.join(" ")).toEqual(named);
        found.push(at.join(" "), ...(await groupsUnder(at)));
      }
      return found;
    }
    expect(await groupsUnder([])).toEqual([
      "projects",
      "keys",
      "environments",
      "protection",
      "deployments",
      "config",
      "variables",
      "audit",
      "audit streams",
    ]);
  });

  it("`show` is another name of every `get` (and `get` of `config show`)", async () => {
    for (const group of [["keys"], ["environments"], ["protection"], ["deployments"], ["audit", "streams"]]) {
      const name = group.join(" ");
      const get = commandLines(await helpOf(group), group).find(([sub]) => sub === "get");
      expect(get?.[1], name).toContain("[aliases: show]");
      expect(await helpOf([...group, "show"]), name).toContain(`deploy-platform ${name} get <`);
    }
    expect(await helpOf(["config", "get"])).toContain("deploy-platform config show <deployment>");
  });

  it("a mistyped command gets the nearest one; a missing one, the list; both exit 10", async () => {
    const cases: Array<[string[], string]> = [
      [["enviroments", "list"], "error: no such command. Did you mean environments?\n"],
      [["environments", "lsit"], "error: no such command. Did you mean list?\n"],
      [["deployments", "folow", "X"], "error: no such command. Did you mean follow?\n"],
      [
        ["environments"],
        "error: environments needs a command: list, get, create, rename, delete (see environments --help).\n",
      ],
      [["audit", "streams", "lst"], "error: no such command. Did you mean list?\n"],
      [
        ["audit", "streams"],
        "error: audit streams needs a command: list, create, get, update, replay, delete (see audit streams --help).\n",
      ],
    ];
    for (const [args, message] of cases) {
      const t = fakeIo(NOWHERE);
      expect(await run(args, t.io, "0.0.0"), args.join(" ")).toBe(10);
      expect(t.stderr(), args.join(" ")).toBe(`${message}Run \`deploy-platform --help\` for usage.\n`);
    }
  });
});
