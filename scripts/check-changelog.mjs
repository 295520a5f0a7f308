#!/usr/bin/env node
// `npm run check:changelog` (part of `npm test`, after `lint:openapi` wrote dist/openapi.json):
// CHANGELOG.md keeps the Keep a Changelog 1.1.0 form, and its newest release is the version the
// API publishes (docs/api.md, "Versioning"):
//   - `# Changelog`, then `## [Unreleased]`, then releases `## [x.y.z] - YYYY-MM-DD`, newest first,
//     each a valid semver above the next and dated no earlier than it;
//   - within a section only `### Added|Changed|Deprecated|Removed|Fixed|Security`, each with at
//     least one `- ` entry, and every release has at least one;
//   - the newest release is /openapi.json's info.version and package.json's version, and its
//     major is the one of the path prefix every public path carries (/v1 → 1.x.y).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checker } from "./lib/check.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const semver = createRequire(import.meta.url)("semver");
const text = readFileSync(join(root, "CHANGELOG.md"), "utf8");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
let doc;
try {
  doc = JSON.parse(readFileSync(join(root, "dist", "openapi.json"), "utf8"));
} catch {
  console.error("dist/openapi.json is missing: run `npm run lint:openapi` first (npm test does).");
  process.exit(1);
}

const { check, done } = checker("check:changelog");

const KINDS = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"];
const lines = text.split("\n");
check(lines[0] === "# Changelog", "CHANGELOG.md starts with `# Changelog`");
const sections = [];
let section;
let kind;
const problems = [];
for (const [i, line] of lines.entries()) {
  if (line.startsWith("## ")) {
    const m = /^## \[(Unreleased|[^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/.exec(line);
    if (!m)
      problems.push(`line ${i + 1}: "${line}" is neither "## [Unreleased]" nor "## [x.y.z] - YYYY-MM-DD"`);
    section = { title: m?.[1] ?? line, date: m?.[2], line: i + 1, kinds: {} };
    sections.push(section);
    kind = undefined;
  } else if (line.startsWith("### ")) {
    kind = line.slice(4);
    if (!section) problems.push(`line ${i + 1}: "${line}" before any release`);
    else if (!KINDS.includes(kind))
      problems.push(`line ${i + 1}: "### ${kind}" is not one of ${KINDS.join(", ")}`);
    else if (section.kinds[kind] !== undefined) problems.push(`line ${i + 1}: a second "### ${kind}"`);
    else section.kinds[kind] = 0;
  } else if (line.startsWith("- ") && section) {
    if (kind === undefined) problems.push(`line ${i + 1}: an entry outside any "### …" group`);
    else section.kinds[kind]++;
  }
}
check(problems.length === 0, "every heading is Keep a Changelog's", problems.join("; "));
check(sections[0]?.title === "Unreleased" && !sections[0].date, "the first section is `## [Unreleased]`");
// Unreleased may be empty as a whole (nothing since the last release), but no group of it is.
const emptyUnreleased = Object.entries(sections[0]?.kinds ?? {}).filter(([, n]) => n === 0);
check(
  emptyUnreleased.length === 0,
  "no group of `## [Unreleased]` is empty",
  emptyUnreleased.map(([kind]) => `### ${kind}`).join(", "),
);
const releases = sections.slice(1);
check(releases.length > 0, `releases: ${releases.map((r) => r.title).join(", ")}`);
const order = [];
for (const [i, r] of releases.entries()) {
  if (!semver.valid(r.title) || !r.date || Number.isNaN(Date.parse(r.date)))
    order.push(`${r.title} (${r.date})`);
  const next = releases[i + 1];
  if (next && semver.valid(r.title) && semver.valid(next.title)) {
    if (!semver.gt(r.title, next.title)) order.push(`${r.title} is not above ${next.title}`);
    if (r.date < next.date) order.push(`${r.title} is dated before ${next.title}`);
  }
  const entries = Object.values(r.kinds).reduce((a, b) => a + b, 0);
  if (entries === 0 || Object.values(r.kinds).some((n) => n === 0))
    order.push(`${r.title} has an empty group`);
}
check(order.length === 0, "releases are semver, dated, newest first, none empty", order.join("; "));

const latest = releases[0]?.title;
const version = doc.info?.version;
check(
  version === latest,
  `/openapi.json info.version ${version} is the newest release`,
  `CHANGELOG.md's newest is ${latest}: add its entry (or change info.version)`,
);
check(pkg.version === latest, `package.json version ${pkg.version} is the newest release`);
const prefixes = [...new Set(Object.keys(doc.paths).map((p) => /^\/v(\d+)\//.exec(p)?.[1] ?? p))];
check(
  prefixes.length === 1 && semver.valid(version) && String(semver.major(version)) === prefixes[0],
  `the major version is the path's: every public path is under /v${prefixes.join(", /v")}`,
);

done(`CHANGELOG.md is Keep a Changelog; the API is ${version}.`);
