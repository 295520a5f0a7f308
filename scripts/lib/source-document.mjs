// The OpenAPI document and the MCP server's `tools/list` answer as the source makes them
// (scripts/openapi-json.ts, run by tsx), made once for each content of what makes them and kept
// under node_modules/.cache/deploy-platform-api/document/. One run costs about 3.4 CPU-s (tsx
// compiles and evaluates the whole app), and `npm test` needed five from the same sources: the
// lint (scripts/lint-openapi.mjs), the two builds of check:deploy and the one it serves
// (scripts/build.mjs), and check:deploy's comparison with what that build serves.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Every file of `dir`, recursively, in a stable order. */
function filesOf(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/**
 * What the document is made of: every file of src/ (the app), the script that writes it, the
 * TypeScript settings tsx compiles with, and the installed packages (package-lock.json names each
 * version). Nothing else reaches it: it is made with no bindings.
 */
function inputsHash() {
  const hash = createHash("sha256");
  const inputs = [
    ...filesOf(join(root, "src")),
    join(root, "scripts", "openapi-json.ts"),
    join(root, "tsconfig.json"),
    join(root, "package-lock.json"),
  ];
  for (const file of inputs) hash.update(`\0${relative(root, file)}\0`).update(readFileSync(file));
  return hash.digest("hex").slice(0, 16);
}

/**
 * The paths of the source's document and tools list (`{ document, tools }`), made if they are not
 * there for this content of the inputs. They are never written in place: their directory is renamed
 * in whole, so a process that finds them reads them whole; of two processes that make them at once
 * (both run openapi-json.ts), the second keeps the first's.
 */
export function sourceDocument() {
  const cache = join(root, "node_modules", ".cache", "deploy-platform-api", "document");
  const made = join(cache, inputsHash());
  const paths = { document: join(made, "openapi.json"), tools: join(made, "mcp-tools.json") };
  if (existsSync(paths.document) && existsSync(paths.tools)) return paths;
  const building = `${made}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  try {
    const tsx = join(root, "node_modules", ".bin", "tsx");
    const args = [join(root, "scripts", "openapi-json.ts"), join(building, "openapi.json")];
    const { status } = spawnSync(tsx, [...args, join(building, "mcp-tools.json")], {
      cwd: root,
      stdio: "inherit",
    });
    if (status !== 0) throw new Error(`scripts/openapi-json.ts exited with ${status}`);
    try {
      renameSync(building, made);
    } catch (err) {
      // Another process made them first: theirs are the same files, and may be read right now.
      if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  // The documents of other sources (an earlier commit's) are of no more use, nor what a killed
  // maker of one left half made.
  const hash = made.slice(cache.length + 1);
  for (const other of readdirSync(cache))
    if (/^[0-9a-f]{16}(\.\d+)?$/.test(other) && !other.startsWith(hash))
      rmSync(join(cache, other), { recursive: true, force: true });
  return paths;
}
