// A command run to its end, its output collected: what the checks of scripts/ run their processes
// with (check:cli's CLI calls, the docs walk's command split, the GitHub Action's runs).
import { spawn } from "node:child_process";

/**
 * Runs `cmd` with `args` to its end, `options.input` on its stdin (else an empty one); resolves
 * with its exit code (-1 if it could not start) and its stdout and stderr; never rejects.
 */
export function runProcess(cmd, args, options = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...options, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    // A process that ends before reading all of its input closes its stdin: its code and stderr
    // say why, not an EPIPE here.
    child.stdin.on("error", () => {});
    child.stdin.end(options.input ?? "");
    child.on("error", (err) => resolve({ code: -1, stdout, stderr: `${stderr}${err}` }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
