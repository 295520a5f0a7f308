/**
 * The package's metadata: what `exports` offers each kind of importer, and one version named the
 * same everywhere (package.json, the CHANGELOG's newest release, the tarball its README and docs/clients.md install).
 * That the packed tarball really loads through `import` and `require()` is scripts/check-cli.mjs.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");
const pkg = JSON.parse(read("../package.json")) as {
  version: string;
  exports: Record<string, Record<string, string>>;
};

describe("package.json", () => {
  it("exports the ES module to import and to require() (the default condition), types first", () => {
    const main = pkg.exports["."] ?? {};
    // Conditions are tried in order: `types` for TypeScript, then `import`, then `default` for
    // everyone else, CommonJS's require() included.
    expect(Object.entries(main)).toEqual([
      ["types", "./dist/index.d.ts"],
      ["import", "./dist/index.js"],
      ["default", "./dist/index.js"],
    ]);
  });

  it("has the version of the CHANGELOG's newest release, the one its README and docs/clients.md install", () => {
    const released = read("../CHANGELOG.md").match(/^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$/m);
    expect(released?.[1]).toBe(pkg.version);
    for (const readme of [read("../README.md"), read("../../../docs/clients.md")]) {
      const tarballs = new Set(readme.match(/deploy-platform-client-[\d.]+\d\.tgz/g));
      expect([...tarballs]).toEqual([`deploy-platform-client-${pkg.version}.tgz`]);
    }
  });
});
