#!/usr/bin/env node
import { readFile } from "node:fs/promises";
import { nodeIo } from "./node-io.js";
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

process.exitCode = await run(process.argv.slice(2), nodeIo(abort.signal), pkg.version);
