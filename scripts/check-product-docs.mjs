#!/usr/bin/env node
// `npm run check:product-docs` (part of `npm test`, in check:document): docs/SPEC.md and
// docs/API_CONTRACT.md, the product's documents that the `§` citations in the code and README
// point at, are byte for byte the product's own, ../shared/SPEC.md and ../shared/API_CONTRACT.md
// beside the repository (CI's clone has them there). Where ../shared does not hold a document (a
// developer's clone with nothing beside it), there is nothing to compare against: the check says
// so and passes. To take the product's current documents: `cp ../shared/{SPEC,API_CONTRACT}.md docs/`.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checker } from "./lib/check.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const shared = join(root, "..", "shared");
const DOCUMENTS = ["SPEC.md", "API_CONTRACT.md"];

const { check, done } = checker("check:product-docs");

/** Where `a` and `b` first differ, by line (1-based), with that line of each. */
function firstDifference(a, b) {
  const [x, y] = [a.split("\n"), b.split("\n")];
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  const line = (lines) => (i < lines.length ? JSON.stringify(lines[i].slice(0, 120)) : "(the end)");
  return `line ${i + 1}: docs/ has ${line(x)}, ../shared/ has ${line(y)}`;
}

let compared = 0;
for (const name of DOCUMENTS) {
  const ours = join(root, "docs", name);
  if (!check(existsSync(ours), `docs/${name} exists`, `cp ../shared/${name} docs/`)) continue;
  const theirs = join(shared, name);
  if (!existsSync(theirs)) {
    console.log(`note ../shared/${name} is not there: nothing to compare docs/${name} against`);
    continue;
  }
  const [a, b] = [readFileSync(ours), readFileSync(theirs)];
  compared++;
  check(
    a.equals(b),
    `docs/${name} is ../shared/${name}`,
    `${firstDifference(a.toString("utf8"), b.toString("utf8"))} (cp ../shared/${name} docs/ to take the product's)`,
  );
}

done(
  compared === 0
    ? "no ../shared/ documents beside the repository, nothing to compare docs/ against."
    : `docs/ holds the product's documents as ../shared/ has them (${compared} compared).`,
);
