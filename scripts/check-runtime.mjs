#!/usr/bin/env node
// `npm run check:runtime` (part of `npm test`): one runtime for `npm run dev`, `npm test` and
// `wrangler deploy`, on the Node the project declares.
//   1. One wrangler, one miniflare and one workerd in the lockfile and in node_modules (the copies
//      @cloudflare/vitest-plugin pins are overridden to the project's: package.json "overrides").
//   2. Node: every node-<os>-<cpu> optional dependency pins the same version; this script (and so
//      every npm script) runs on it where that build is installed; it satisfies "engines"; and the
//      lowest Node "engines" admits satisfies the "engines" of every installed package, so the
//      range declares what the dependencies really need. .nvmrc and .node-version name the pinned
//      Node, so nvm, fnm and Volta users switch to it in every new shell.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checker } from "./lib/check.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const semver = require("semver");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"));

const { check, done } = checker("check:runtime");

// 1. One wrangler, miniflare and workerd.
const versionsOf = (name) => {
  const found = new Map();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === `node_modules/${name}` || path.endsWith(`/node_modules/${name}`)) {
      // Only what is installed here (a platform's optional binary may be absent).
      const installed = existsSync(join(root, path, "package.json"));
      const version = installed
        ? JSON.parse(readFileSync(join(root, path, "package.json"), "utf8")).version
        : entry.version;
      found.set(path, version);
    }
  }
  return found;
};
for (const name of ["wrangler", "miniflare", "workerd"]) {
  const found = versionsOf(name);
  const versions = [...new Set(found.values())];
  check(
    versions.length === 1,
    `one ${name}: ${versions.join(", ") || "none"}${versions.length > 1 ? ` (${[...found.keys()].join(", ")})` : ""}`,
  );
}
const wranglerDeps = JSON.parse(readFileSync(join(root, "node_modules/wrangler/package.json"), "utf8"));
const miniflare = versionsOf("miniflare").values().next().value;
const workerd = versionsOf("workerd").values().next().value;
check(
  wranglerDeps.dependencies.miniflare === miniflare && wranglerDeps.dependencies.workerd === workerd,
  `they are the ones wrangler ${wranglerDeps.version} ships with (miniflare ${wranglerDeps.dependencies.miniflare}, workerd ${wranglerDeps.dependencies.workerd})`,
);

// 2. Node.
const pins = Object.entries(pkg.optionalDependencies ?? {}).filter(([name]) =>
  /^node-(bin-)?(darwin|linux|win)-/.test(name),
);
const pinned = [...new Set(pins.map(([, version]) => version))];
check(
  pins.length > 0 && pinned.length === 1 && semver.valid(pinned[0]),
  `the registry's Node builds pin one version: ${pinned.join(", ")} (${pins.map(([n]) => n).join(", ")})`,
);
// nvm, fnm, Volta (and asdf with legacy files) switch a new shell to the Node these name.
for (const file of [".nvmrc", ".node-version"]) {
  const named = existsSync(join(root, file)) ? readFileSync(join(root, file), "utf8").trim() : "(missing)";
  check(named === pinned[0], `${file} names the pinned Node ${pinned[0]}: ${named}`);
}
const engines = pkg.engines?.node;
check(
  Boolean(engines) && semver.satisfies(pinned[0], engines),
  `Node ${pinned[0]} satisfies "engines": "${engines}"`,
);
const installedBuild = pins.find(([name]) => existsSync(join(root, "node_modules", name, "package.json")));
if (installedBuild) {
  check(
    process.versions.node === pinned[0],
    `npm scripts run on the pinned Node (${installedBuild[0]}): this one is ${process.versions.node}`,
  );
} else {
  console.log(`note no registry Node build for ${process.platform}-${process.arch} is installed`);
  check(
    semver.satisfies(process.versions.node, engines),
    `this Node ${process.versions.node} satisfies engines`,
  );
}
const lowest = semver.minVersion(engines)?.version;
const refused = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  if (!path || !entry.engines?.node || !existsSync(join(root, path, "package.json"))) continue;
  if (!semver.satisfies(lowest, entry.engines.node, { includePrerelease: true }))
    refused.push(`${path.replace(/^.*node_modules\//, "")} (${entry.engines.node})`);
}
check(
  refused.length === 0,
  `the lowest Node "engines" admits, ${lowest}, is accepted by every installed package` +
    (refused.length ? `; not by: ${refused.join(", ")}` : ""),
);

done("one wrangler, miniflare and workerd; Node as declared.");
