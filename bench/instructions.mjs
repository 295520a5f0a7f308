// The CPU instructions a Worker's start costs, counted rather than timed: valgrind's callgrind counts
// every instruction workerd executes (all threads) while it loads the Worker — compiles and evaluates
// its modules — and exits (`workerd test`, with a test handler that does nothing). Unlike a clock
// it does not see the machine's load: the same bundle counts the same to about 0.1 %. A change of a
// few million instructions can still come from where a garbage collection happens to fall.
// `evaluate` is the part spent evaluating the modules (V8's Module::Evaluate, inclusive), the rest
// is workerd's own start and compiling them. Linux with valgrind only (`apt-get install valgrind`);
// about a minute per Worker.
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import workerd from "workerd";

export const hasValgrind = () => spawnSync("valgrind", ["--version"], { stdio: "ignore" }).status === 0;

/**
 * Instructions workerd executes to start a Worker whose built modules (`wrangler deploy --dry-run
 * --outdir`) are in `dir` and exit, `{ total, evaluate }`. `main` names the entry module in `dir`.
 */
export function startInstructions(dir, main, compatibilityDate) {
  const modules = readdirSync(dir).filter((f) => /\.m?js$/.test(f) && f !== "startup-entry.js");
  writeFileSync(
    join(dir, "startup-entry.js"),
    `import * as worker from ${JSON.stringify(`./${main}`)};
export default { async test() { if (!worker.default) throw new Error("no default export"); } };\n`,
  );
  const embed = (name) => `(name = ${JSON.stringify(name)}, esModule = embed ${JSON.stringify(name)})`;
  writeFileSync(
    join(dir, "startup.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = ( services = [ (name = "main", worker = .w) ] );
const w :Workerd.Worker = (
  modules = [ ${["startup-entry.js", ...modules].map(embed).join(", ")} ],
  compatibilityDate = ${JSON.stringify(compatibilityDate)},
);\n`,
  );
  // V8 writes the machine code it runs: valgrind must see it change (--smc-check).
  const valgrind = ["--tool=callgrind", "--callgrind-out-file=startup.callgrind", "--smc-check=all-non-file"];
  const workerdTest = [workerd.default, "test", "--predictable", "startup.capnp"];
  const options = { cwd: dir, encoding: "utf8", maxBuffer: 1 << 28 };
  const stdio = ["ignore", "ignore", "pipe"];
  const { stderr: log, status } = spawnSync("valgrind", [...valgrind, ...workerdTest], { ...options, stdio });
  const collected = /Collected : (\d+)/.exec(log);
  if (status !== 0 || !collected)
    throw new Error(`the Worker in ${dir} did not start under callgrind:\n${log}`);
  const annotate = ["--inclusive=yes", "--threshold=100", "startup.callgrind"];
  const annotated = execFileSync("callgrind_annotate", annotate, options);
  const evaluate = /^\s*([\d,]+) .*v8::Module::Evaluate\(/m.exec(annotated);
  if (!evaluate) throw new Error(`no module evaluation in the profile of ${dir}`);
  return { total: Number(collected[1]), evaluate: Number(evaluate[1].replaceAll(",", "")) };
}
