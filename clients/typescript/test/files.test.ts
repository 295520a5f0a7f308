/**
 * The CLI's files on a real disk (src/cli/node-io.ts, what the bin uses): a file it cannot read
 * is bad usage, and an export never sits readable by others.
 */
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readUserFile, writePrivateFile } from "../src/cli/node-io.js";
import { run } from "../src/cli/program.js";
import { fakeIo, json, startFake } from "./fake-api.js";

const SECRETS = 'DATABASE_URL="postgres://u:s3cret@db/app"\n';
let dir: string;
let close: (() => Promise<void>) | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cli-files-"));
});
afterEach(async () => {
  await close?.();
  close = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** A fake API that exports SECRETS and applies any change; the CLI with the real file functions. */
async function cli() {
  const server = await startFake((_req, res, url) => {
    if (url.pathname.endsWith("/export")) {
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return res.end(SECRETS);
    }
    json(res, 200, { version: 1, dry_run: true, changes: [] });
  });
  close = server.close;
  return (args: string[]) => {
    const t = fakeIo(server.base);
    t.io.readFile = readUserFile;
    t.io.writePrivateFile = writePrivateFile;
    return run(args, t.io, "0.0.0").then((code) => ({ code, ...t, seen: server.seen }));
  };
}
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

describe("variables import of a file it cannot read", () => {
  it("exits 10 naming the file, and sends nothing", async () => {
    const deploy = await cli();
    const missing = join(dir, "missing.env");
    const r = await deploy(["variables", "import", missing, "--environment", "E1"]);
    expect(r.code).toBe(10);
    expect(r.stderr()).toBe(`error: cannot read ${missing}: no such file or directory\n`);
    expect(r.seen).toHaveLength(0);
    const folder = await deploy(["variables", "import", dir, "--environment", "E1", "--json"]);
    expect(folder.code).toBe(10);
    expect(JSON.parse(folder.stderr())).toEqual({
      error: { code: "usage", message: `cannot read ${dir}: it is a directory` },
    });
  });
});

describe("variables export -o", () => {
  it("replaces an existing mode-644 file by a mode-600 one: a reader that opened it before never sees the secrets", async () => {
    const deploy = await cli();
    const out = join(dir, "prod.env");
    writeFileSync(out, "OLD=1\n");
    chmodSync(out, 0o644);
    // Someone who could read the file while it was 644 opened it then.
    const earlier = openSync(out, "r");
    const r = await deploy(["variables", "export", "--environment", "E1", "-o", out]);
    expect(r.code, r.stderr()).toBe(0);
    expect(r.stderr()).toBe(`wrote 1 variables to ${out}\n`);
    expect(readFileSync(out, "utf8")).toBe(SECRETS);
    expect(mode(out)).toBe("600");
    const buffer = Buffer.alloc(256);
    const read = readSync(earlier, buffer, 0, 256, 0);
    expect(buffer.subarray(0, read).toString("utf8")).toBe("OLD=1\n");
    expect(readdirSync(dir)).toEqual(["prod.env"]);
  });

  it("writes a new file mode 600, through a symbolic link, and refuses a directory (exit 10)", async () => {
    const deploy = await cli();
    const fresh = join(dir, "new.env");
    expect((await deploy(["variables", "export", "--environment", "E1", "-o", fresh])).code).toBe(0);
    expect(mode(fresh)).toBe("600");
    mkdirSync(join(dir, "real"));
    const target = join(dir, "real", "prod.env");
    writeFileSync(target, "OLD=1\n", { mode: 0o644 });
    symlinkSync(target, join(dir, "link.env"));
    expect(
      (await deploy(["variables", "export", "--environment", "E1", "-o", join(dir, "link.env")])).code,
    ).toBe(0);
    expect(readFileSync(target, "utf8")).toBe(SECRETS);
    expect(mode(target)).toBe("600");
    expect(readdirSync(join(dir, "real"))).toEqual(["prod.env"]);
    const r = await deploy(["variables", "export", "--environment", "E1", "-o", join(dir, "real")]);
    expect(r.code).toBe(10);
    expect(r.stderr()).toBe(`error: cannot write ${join(dir, "real")}: it is a directory\n`);
  });
});
