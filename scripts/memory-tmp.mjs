// `npm test`'s temporary files in memory: runs the command it is given (`node
// scripts/memory-tmp.mjs npm run test:steps`) with TMPDIR, TMP and TEMP pointing at a directory of
// its own on a RAM-backed file system, and removes that directory when the command ends.
//
// Why: every runtime the tests start keeps its D1 and Durable Object SQLite files under the
// temporary directory (Miniflare's `os.tmpdir()`, the checks' `--persist-to` states, the client's
// packed installs), and SQLite syncs each committed write to the disk. On a RAM-backed file system a
// sync costs nothing: `npx vitest run test/routes/deployments test/routes/environments` took 45–47 s
// there against 60–61 s on this machine's disk, interleaved (docs/development.md, "Tests and
// benchmarks"). Nothing the tests assert needs a disk: a process killed in a test loses no file of
// either kind, and no test outlives the machine.
//
// Only where it is safe and helps: Linux, `/dev/shm` a tmpfs with at least MIN_FREE free (a
// container's default 64 MiB is too small), and TMPDIR not set already (a choice made by the
// machine's owner stands). Anywhere else the command runs as it is. A directory a killed run left
// behind (its pid no longer running) is removed by the next run, since it holds memory.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";

const ROOT = "/dev/shm";
const PREFIX = "deploy-platform-test-";
const TMPFS_MAGIC = 0x01021994;
/** The most the suite holds there at once is about 0.5 GiB (461 MB, sampled every 5 s); four times that. */
const MIN_FREE = 2 * 1024 ** 3;

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node scripts/memory-tmp.mjs <command> [args…]");
  process.exit(2);
}

/** A RAM-backed directory to use, or undefined. */
function memoryRoot() {
  if (process.platform !== "linux" || process.env.TMPDIR) return undefined;
  try {
    const fs = statfsSync(ROOT);
    if (fs.type !== TMPFS_MAGIC || fs.bavail * fs.bsize < MIN_FREE) return undefined;
  } catch {
    return undefined;
  }
  return ROOT;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
}

const root = memoryRoot();
let dir;
if (root) {
  for (const name of readdirSync(root)) {
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && pid > 0 && !alive(pid))
      rmSync(join(root, name), { recursive: true, force: true });
  }
  dir = mkdtempSync(join(root, `${PREFIX}${process.pid}-`));
}

const env = dir ? { ...process.env, TMPDIR: dir, TMP: dir, TEMP: dir } : process.env;
const child = spawn(command, args, { stdio: "inherit", env, shell: process.platform === "win32" });
const forward = (signal) => child.kill(signal);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward);

child.on("exit", (code, signal) => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  if (signal) {
    for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(s, forward);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
});
