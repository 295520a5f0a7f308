/**
 * Writes src/routes/index.ts, the operation table the app registers (src/http/operations.ts), and
 * the route groups it loads, from the routes' own declarations: every file under src/routes named
 * by an operationId (`routes/deployments/redeployDeployment.ts`) that exports `register` is loaded,
 * its route registered on an app of its own, and its method and path read from what `defineRoute` /
 * `defineInternalRoute` declared. A route is declared once, in its file; the table is derived.
 *
 *   npx tsx scripts/routes-index.ts           write them (`npm run routes:generate`)
 *   npx tsx scripts/routes-index.ts --check   fail when a committed one differs (check:static)
 *
 * It also fails when a file declares an operation under another name than its own, so one grep for
 * an operationId finds its route file.
 *
 * The groups: the read (`get`) operations of a folder are one module, `_read.ts`, and its other
 * operations another, `_write.ts`, each re-exporting its routes' `register` under their
 * operationIds; an operation's first request loads its group. A module costs a new isolate's start
 * about 0.12 M instructions for being in the upload, whatever its size (bench/README.md), and a
 * route builds its declaration only when registered, so loading a group builds no sibling's route:
 * 41 groups for 120 operations start a new isolate 18 M instructions sooner (bench/README.md,
 * "Startup and cold requests"). Reads and writes apart, a first read still builds no request body.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { OpenAPIHono } from "@hono/zod-openapi";
import { declaredRoutes } from "../src/http/route-meta";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const routesDir = join(root, "src", "routes");
const target = join(routesDir, "index.ts");

const walk = (dir: string): string[] =>
  readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });

type Entry = {
  method: string;
  path: string;
  /** The route file's folder under src/routes, its name (the operationId) and its group's. */
  folder: string;
  name: string;
  group: "_read" | "_write";
  internal: boolean;
};

const problems: string[] = [];
const entries: Entry[] = [];
const isGroup = (file: string) => /^_(read|write)\.ts$/.test(basename(file));
for (const file of walk(routesDir).filter((f) => f.endsWith(".ts") && f !== target && !isGroup(f))) {
  const name = basename(file, ".ts");
  const source = readFileSync(file, "utf8");
  const declares = /\boperationId:\s*"/.test(source);
  // Declared at the module's top level, a route would be built whenever its group loads.
  if (/^(export )?const \w+ = define(Internal)?Route\(/m.test(source)) {
    problems.push(`${relative(root, file)} declares its route at the top level: declare it in register`);
  }
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const fn = mod.register;
  if (typeof fn !== "function") {
    if (declares) problems.push(`${relative(root, file)} declares a route but exports no register`);
    continue;
  }
  const app = new OpenAPIHono();
  (fn as (app: OpenAPIHono) => void)(app);
  const own = new Set(app.routes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}")}`));
  const metas = declaredRoutes(app).filter((m) => own.has(`${m.method} ${m.path}`));
  if (metas.length !== 1) {
    problems.push(`${relative(root, file)} must declare exactly one operation (declares ${metas.length})`);
    continue;
  }
  const [meta] = metas;
  if (meta.operationId !== name) {
    problems.push(
      `${relative(root, file)} declares operationId ${meta.operationId}: name the file ${meta.operationId}.ts`,
    );
    continue;
  }
  const method = meta.method.toLowerCase();
  entries.push({
    method,
    path: meta.path,
    folder: relative(routesDir, dirname(file)),
    name,
    group: method === "get" ? "_read" : "_write",
    internal: meta.internal,
  });
}

/**
 * The order routes are matched in: public before internal, then by path segment, a literal segment
 * before a parameter at the same place (`/v1/api-keys/current` before `/v1/api-keys/{id}`), then
 * by method.
 */
function compare(a: Entry, b: Entry): number {
  if (a.internal !== b.internal) return a.internal ? 1 : -1;
  const as = a.path.split("/");
  const bs = b.path.split("/");
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] === bs[i]) continue;
    const ap = as[i].startsWith("{");
    const bp = bs[i].startsWith("{");
    if (ap !== bp) return ap ? 1 : -1;
    return as[i] < bs[i] ? -1 : 1;
  }
  if (as.length !== bs.length) return as.length - bs.length;
  const order = ["get", "post", "put", "patch", "delete"];
  return order.indexOf(a.method) - order.indexOf(b.method);
}
entries.sort(compare);

const seen = new Set<string>();
for (const e of entries) {
  const key = `${e.method} ${e.path}`;
  if (seen.has(key)) problems.push(`${key} is declared twice`);
  seen.add(key);
}
if (problems.length > 0) {
  console.error(`routes: ${problems.join("\n  ")}`);
  process.exit(1);
}

const GENERATED = `GENERATED by \`npm run routes:generate\` (scripts/routes-index.ts) from each route file's own
 * declaration; do not edit. \`check:static\` fails when it is stale.`;

const lines = entries.map(
  (e) =>
    `  op("${e.method}", "${e.path}", () => import("./${e.folder}/${e.group}").then((g) => g.${e.name})),`,
);
const files = new Map<string, string>();
files.set(
  target,
  `/**
 * ${GENERATED}
 *
 * Every operation of the API, public (/v1) and internal (/internal/v1), by method and path, in the
 * order they are matched (a literal segment before a parameter: \`/v1/api-keys/current\` before
 * \`/v1/api-keys/{id}\`). Each is loaded on its first request with its group (its folder's reads, or
 * its other operations: \`_read.ts\`, \`_write.ts\`), and built alone (src/http/operations.ts): a
 * new isolate builds no route it does not serve.
 */
import { type Operation, op } from "../http/operations";

// biome-ignore format: one operation a line
export const OPERATIONS: readonly Operation[] = [
${lines.join("\n")}
];
`,
);
const groups = new Map<string, Entry[]>();
for (const e of [...entries].sort((a, b) => (a.name < b.name ? -1 : 1))) {
  const file = join(routesDir, e.folder, `${e.group}.ts`);
  groups.set(file, [...(groups.get(file) ?? []), e]);
}
for (const [file, members] of groups) {
  const kind = members[0]?.group === "_read" ? "read (`get`) operations" : "operations other than reads";
  files.set(
    file,
    `/**
 * ${GENERATED}
 *
 * The ${kind} of this folder, loaded together on the first request of one of
 * them (src/routes/index.ts).
 */
// biome-ignore-all assist/source/organizeImports: in the generator's order
${members.map((e) => `export { register as ${e.name} } from "./${e.name}";`).join("\n")}
`,
  );
}
const stale = walk(routesDir).filter((f) => isGroup(f) && !files.has(f));

if (process.argv.includes("--check")) {
  const differ = [...files].filter(
    ([file, text]) => !existsSync(file) || readFileSync(file, "utf8") !== text,
  );
  const wrong = [...differ.map(([file]) => file), ...stale].map((f) => relative(root, f));
  if (wrong.length > 0) {
    console.error(`routes: stale: ${wrong.join(", ")}: run \`npm run routes:generate\` and commit them.`);
    process.exit(1);
  }
  console.log(
    `routes: src/routes/index.ts and its ${groups.size} groups up to date (${entries.length} operations)`,
  );
} else {
  for (const [file, text] of files) writeFileSync(file, text);
  for (const file of stale) rmSync(file);
  console.log(`routes: wrote src/routes/index.ts and ${groups.size} groups (${entries.length} operations)`);
}
