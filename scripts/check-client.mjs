#!/usr/bin/env node
// Part of `npm test`, after `lint:openapi` wrote dist/openapi.json: the TypeScript client's
// generated types (clients/typescript/src/schema.d.ts) must be what openapi-typescript makes of
// the current routes, and the client must type-check with its own TypeScript (5, not the
// service's 7). On a difference: `npm run client:generate` and commit.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const client = join(root, "clients", "typescript");
const bin = (name) => {
  const exe = process.platform === "win32" ? `${name}.cmd` : name;
  for (const dir of [join(client, "node_modules", ".bin"), join(root, "node_modules", ".bin")]) {
    try {
      readFileSync(join(dir, exe));
      return join(dir, exe);
    } catch {}
  }
  throw new Error(`${name} is not installed: run npm install`);
};
const tmp = mkdtempSync(join(tmpdir(), "client-types-"));
try {
  const fresh = join(tmp, "schema.d.ts");
  // A field with a default is optional to send: without this flag the generator makes every
  // defaulted property required, request bodies included (a member add's `role`).
  execFileSync(
    bin("openapi-typescript"),
    [join(root, "dist", "openapi.json"), "--default-non-nullable", "false", "-o", fresh],
    {
      stdio: "pipe",
    },
  );
  const committed = join(client, "src", "schema.d.ts");
  if (readFileSync(fresh, "utf8") !== readFileSync(committed, "utf8")) {
    console.error(
      "clients/typescript/src/schema.d.ts is out of date with the routes: run `npm run client:generate` and commit it.",
    );
    process.exit(1);
  }
  execFileSync(bin("tsc"), ["--noEmit", "-p", client], { stdio: "inherit" });
  console.log("client: generated types up to date, type-checks");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
