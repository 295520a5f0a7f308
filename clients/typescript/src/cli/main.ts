#!/usr/bin/env node
import { chmod, readFile, writeFile } from "node:fs/promises";
import { run } from "./program.js";

const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

// Ctrl-C stops a long wait cleanly (the command reports it); a second one ends at once.
const abort = new AbortController();
process.once("SIGINT", () => {
  abort.abort(new Error("interrupted"));
  process.once("SIGINT", () => process.exit(130));
  // A command that is not waiting on the signal (a plain request) is not held up for long.
  setTimeout(() => process.exit(130), 2000).unref();
});

process.exitCode = await run(
  process.argv.slice(2),
  {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal: abort.signal,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    readFile: (path) => readFile(path, "utf8"),
    writePrivateFile: async (path, text) => {
      await writeFile(path, text, { mode: 0o600 });
      await chmod(path, 0o600);
    },
  },
  pkg.version,
);
