#!/usr/bin/env node
// Lints the generated OpenAPI document (part of `npm test`): Redocly `recommended` and
// Spectral `spectral:oas` must report nothing; the Spectral OWASP ruleset must report nothing
// in what a client sends (parameters, request bodies and every schema they reach). OWASP
// findings in response schemas are printed as a count only.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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

const dumped = run(bin("tsx"), [join(root, "scripts", "openapi-json.ts"), docPath]);
if (!dumped.ok) {
  console.error(dumped.out);
  process.exit(1);
}
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

// Schemas a client sends: reachable from parameters and request bodies.
const requestSchemas = new Set();
const visit = (node) => {
  if (Array.isArray(node)) return node.forEach(visit);
  if (!node || typeof node !== "object") return;
  const ref = typeof node.$ref === "string" && /^#\/components\/schemas\/(.+)$/.exec(node.$ref)?.[1];
  if (ref && !requestSchemas.has(ref)) {
    requestSchemas.add(ref);
    visit(doc.components.schemas[ref]);
  }
  for (const value of Object.values(node)) visit(value);
};
for (const item of Object.values(doc.paths)) {
  for (const op of Object.values(item)) {
    visit(op.parameters);
    visit(op.requestBody);
  }
}
const inRequest = (path) =>
  (path[0] === "paths" && (path[3] === "parameters" || path[3] === "requestBody")) ||
  (path[0] === "components" && path[1] === "schemas" && requestSchemas.has(path[2]));
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
