// Linux /proc helpers for the bench: the workerd processes a dev server started, which of
// them listens on a port, and their CPU time (utime + stime) and resident memory.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ (sysconf(_SC_CLK_TCK)) on Linux

function stat(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, "utf8");
  // comm (field 2) may contain spaces: the fields after it start behind the last ')'.
  const after = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(after[1]), utime: Number(after[11]), stime: Number(after[12]) };
}

/** Every live descendant of `root` (pid) with its command name. */
export function descendants(root) {
  const children = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const { ppid } = stat(name);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(name));
    } catch {}
  }
  const out = [];
  const queue = [root];
  while (queue.length) {
    const pid = queue.shift();
    for (const child of children.get(pid) ?? []) {
      let comm = "";
      try {
        comm = readFileSync(`/proc/${child}/comm`, "utf8").trim();
      } catch {
        continue;
      }
      out.push({ pid: child, comm });
      queue.push(child);
    }
  }
  return out;
}

/** Listening TCP sockets: inode → local port (IPv4 and IPv6). */
function listening() {
  const out = new Map();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== "0A") continue;
      out.set(f[9], Number.parseInt(f[1].split(":").at(-1), 16));
    }
  }
  return out;
}

/** The TCP ports `pid` listens on. */
export function listeningPorts(pid) {
  const sockets = listening();
  const ports = new Set();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target = "";
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && sockets.has(m[1])) ports.add(sockets.get(m[1]));
    }
  } catch {}
  return [...ports];
}

/**
 * The processes of a dev server started as `root`, serving `port`: `worker` is the workerd
 * that runs the Worker (with its Durable Objects and local D1), `proxy` the workerd in front
 * of it that listens on `port` (wrangler's dev proxy), `node` wrangler's own processes.
 */
export function roles(root, port) {
  const all = descendants(root);
  const workerds = all.filter((p) => p.comm === "workerd");
  const proxy = workerds.filter((p) => listeningPorts(p.pid).includes(port));
  const worker = workerds.filter((p) => !proxy.includes(p));
  const node = [{ pid: root }, ...all.filter((p) => p.comm.startsWith("node"))];
  return {
    worker: worker.map((p) => p.pid),
    proxy: proxy.map((p) => p.pid),
    node: [...new Set(node.map((p) => p.pid))],
  };
}

/** CPU seconds (user + system) used so far by `pids`. */
export function cpuSeconds(pids) {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const s = stat(pid);
      ticks += s.utime + s.stime;
    } catch {}
  }
  return ticks / TICKS_PER_SECOND;
}

/** Resident set size in MB of `pids` together. */
export function rssMb(pids) {
  let kb = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) kb += Number(m[1]);
    } catch {}
  }
  return kb / 1024;
}
