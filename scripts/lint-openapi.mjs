#!/usr/bin/env node
// Lints the generated OpenAPI document (part of `npm test`): Redocly `recommended` and
// Spectral `spectral:oas` must report nothing; the Spectral OWASP ruleset must report nothing
// (errors and warnings alike) in what a client sends: parameters and request bodies, inline or
// in `components`, and every schema they reach. OWASP findings in responses are printed as a
// count only.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sourceDocument } from "./lib/source-document.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = (name) => join(root, "node_modules", ".bin", process.platform === "win32" ? `${name}.cmd` : name);
const docPath = join(root, "dist", "openapi.json");
// No telemetry or update checks: the lint works offline and says nothing else.
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
const run = (cmd, args) => {
  try {
    return { ok: true, out: execFileSync(cmd, args, { cwd: root, encoding: "utf8", stdio: "pipe", env }) };
  } catch (err) {
    return { ok: false, out: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
};

// The source's document (./lib/source-document.mjs), where the client's types are generated from.
mkdirSync(dirname(docPath), { recursive: true });
copyFileSync(sourceDocument().document, docPath);
const doc = JSON.parse(readFileSync(docPath, "utf8"));
const size = readFileSync(docPath).length;
const minified = JSON.stringify(doc).length;
let failed = false;

// Redocly `recommended`.
const redocly = run(bin("redocly"), [
  "lint",
  "--config",
  join(root, "redocly.yaml"),
  "--format",
  "json",
  docPath,
]);
const redoclyReport = JSON.parse(redocly.out.slice(redocly.out.indexOf("{")));
const { errors, warnings } = redoclyReport.totals;
if (errors + warnings > 0) {
  failed = true;
  for (const p of redoclyReport.problems)
    console.error(`redocly ${p.ruleId}: ${p.message} ${p.location?.[0]?.pointer}`);
}

// Spectral `spectral:oas` + OWASP, in one run.
const spectral = run(bin("spectral"), [
  "lint",
  "-r",
  join(root, ".spectral.yaml"),
  "-f",
  "json",
  "-q",
  docPath,
]);
const findings = JSON.parse(spectral.out.trim() || "[]");
const oas = findings.filter((f) => !f.code.startsWith("owasp:"));
for (const f of oas) console.error(`spectral ${f.code}: ${f.message} ${f.path.join(".")}`);
if (oas.length > 0) failed = true;

// What a client sends: every parameter and request body, where it is written (an operation's or a
// path's `parameters` and `requestBody`) and every component they reach through `$ref`
// (`components.parameters`, `components.requestBodies`, the schemas inside them). A component that
// a response also uses still counts as sent.
const sent = new Set(); // "section/name", e.g. "parameters/IfMatch", "schemas/Project"
const visit = (node) => {
  if (Array.isArray(node)) return node.forEach(visit);
  if (!node || typeof node !== "object") return;
  const ref = typeof node.$ref === "string" && /^#\/components\/([^/]+)\/(.+)$/.exec(node.$ref);
  if (ref && !sent.has(`${ref[1]}/${ref[2]}`)) {
    sent.add(`${ref[1]}/${ref[2]}`);
    visit(doc.components?.[ref[1]]?.[ref[2]]);
  }
  for (const value of Object.values(node)) visit(value);
};
for (const item of Object.values(doc.paths)) {
  visit(item.parameters);
  for (const op of Object.values(item)) {
    visit(op.parameters);
    visit(op.requestBody);
  }
}
// An example (`components.examples`) is a value, not a schema: a variable entry such as
// `{ "type": "string", "value": "…" }` reads to the OWASP rules as an unbounded string schema.
const inRequest = (path) =>
  (path[0] === "paths" &&
    (path[2] === "parameters" || path[3] === "parameters" || path[3] === "requestBody")) ||
  (path[0] === "components" && path[1] !== "examples" && sent.has(`${path[1]}/${path[2]}`));
const owasp = findings.filter((f) => f.code.startsWith("owasp:"));
const owaspRequest = owasp.filter(
  (f) => inRequest(f.path) || (f.path[0] !== "paths" && f.path[0] !== "components"),
);
for (const f of owaspRequest) console.error(`owasp ${f.code}: ${f.message} ${f.path.join(".")}`);
if (owaspRequest.length > 0) failed = true;

console.log(
  `openapi lint: ${size} bytes (${minified} minified); redocly ${errors} errors, ${warnings} warnings; ` +
    `spectral:oas ${oas.length}; owasp ${owaspRequest.length} in requests and the document, ` +
    `${owasp.length - owaspRequest.length} in responses`,
);
if (failed) process.exit(1);
