/**
 * What a command reads and writes, passed in (not taken from `process`) so that the whole CLI
 * runs in a test with a fake terminal; and how it prints: aligned tables for a person, JSON for
 * a script, errors on stderr with the exit code a CI can branch on.
 */
import { ApiError } from "../errors.js";
import { StreamError } from "../follow.js";

export type Output = { write(text: string): unknown; isTTY?: boolean };

export type Io = {
  stdout: Output;
  stderr: Output;
  env: Record<string, string | undefined>;
  /** The whole of standard input (`variables import -`). */
  readStdin: () => Promise<string>;
  /** A file the user named; one that cannot be read throws a `UsageError` naming it. */
  readFile: (path: string) => Promise<string>;
  /** Writes a file only its owner may read, at no moment readable by others: an export holds secrets. */
  writePrivateFile: (path: string, text: string, options?: { makeDirectory?: boolean }) => Promise<void>;
  /** A file's text, or undefined when there is no such file (the key file `login` writes). */
  readFileIfExists: (path: string) => Promise<string | undefined>;
  /** Appends to a file (`$GITHUB_ENV`). */
  appendFile: (path: string, text: string) => Promise<void>;
  /**
   * Asks a question on the terminal and answers the reply; absent when standard input is not a
   * terminal (a CI job, a pipe), where nothing may wait for a person.
   */
  ask?: (question: string) => Promise<string>;
  /** The fetch under the client (default: the global one). */
  fetch?: typeof globalThis.fetch;
  /** How the client waits between retries (tests pass one that does not). */
  sleep?: (ms: number) => Promise<void>;
  /** Stops long waits (Ctrl-C). */
  signal?: AbortSignal;
};

/**
 * Exit codes. 0–3 tell how a deployment ended (`wait`, `follow`); 10 and above say that the
 * command itself did not get an answer, so a CI never mistakes one for the other.
 */
export const EXIT = {
  succeeded: 0,
  failed: 1,
  cancelled: 2,
  timeout: 3,
  /** Bad arguments or missing configuration. */
  usage: 10,
  /** The API refused the request (a 4xx other than 429): its `code` and `message` on stderr. */
  refused: 11,
  /** The API failed or could not be reached (5xx, 429 after the retries, network). */
  unavailable: 12,
  /** Anything else: a bug of this CLI. */
  unexpected: 13,
} as const;

/** What each exit code means: `--help` prints this list, and its README and docs/ci.md hold the same one. */
export const EXIT_CODES: ReadonlyArray<readonly [number, string]> = [
  [
    EXIT.succeeded,
    "done; for `deploy`, `wait`, `follow` (and `--wait`, `--follow`): the deployment succeeded",
  ],
  [EXIT.failed, "the deployment failed"],
  [EXIT.cancelled, "the deployment was cancelled"],
  [EXIT.timeout, "the wait timed out (`--timeout`)"],
  [
    EXIT.usage,
    "bad usage or configuration, a file that cannot be read or written, a `promote` not confirmed",
  ],
  [EXIT.refused, "the API refused the request (a 4xx): its `code` and `message` are on stderr"],
  [EXIT.unavailable, "the API failed or could not be reached (5xx, 429 after the retries, network)"],
  [EXIT.unexpected, "an unexpected error in the CLI"],
];

export class UsageError extends Error {}

/** A deployment's final status as an exit code. */
export function exitForStatus(status: string): number {
  if (status === "succeeded") return EXIT.succeeded;
  if (status === "cancelled") return EXIT.cancelled;
  return EXIT.failed;
}

/**
 * A line on stderr about the command's progress, never on stdout: as JSON with `--json` (as
 * errors are), else as text, first clearing a spinner's line on a terminal.
 */
export function notice(io: Io, json: boolean, code: string, message: string): void {
  if (json) io.stderr.write(`${JSON.stringify({ notice: { code, message } })}\n`);
  else io.stderr.write(`${io.stderr.isTTY ? "\r\x1b[K" : ""}${message}\n`);
}

/** Prints the failure on stderr and answers its exit code. */
export function reportError(io: Io, json: boolean, err: unknown): number {
  if (err instanceof ApiError) {
    const transient = err.status === 429 || err.status >= 500;
    if (json) {
      const out = { error: err.body, status: err.status, request_id: err.requestId };
      io.stderr.write(`${JSON.stringify(out)}\n`);
    } else {
      const where = `HTTP ${err.status}${err.requestId ? `, request ${err.requestId}` : ""}`;
      io.stderr.write(`error: ${err.body.code}: ${err.body.message} (${where})\n`);
      for (const item of causes(err.body.cause)) io.stderr.write(`  ${item}\n`);
    }
    return transient ? EXIT.unavailable : EXIT.refused;
  }
  if (err instanceof UsageError) {
    io.stderr.write(
      json
        ? `${JSON.stringify({ error: { code: "usage", message: err.message } })}\n`
        : `error: ${err.message}\n`,
    );
    return EXIT.usage;
  }
  const message = err instanceof Error ? err.message : String(err);
  const network = err instanceof TypeError && /fetch/i.test(message);
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
  const text = network ? `cannot reach the API: ${message}${cause}` : `${message}${cause}`;
  io.stderr.write(
    json
      ? `${JSON.stringify({ error: { code: network ? "network" : "error", message: text } })}\n`
      : `error: ${text}\n`,
  );
  return network || err instanceof StreamError ? EXIT.unavailable : EXIT.unexpected;
}

function causes(cause: unknown): string[] {
  if (!Array.isArray(cause)) return [];
  return cause.map((item) =>
    typeof item === "object" && item !== null && "message" in item
      ? `${"path" in item ? `${String(item.path)}: ` : ""}${String(item.message)}`
      : JSON.stringify(item),
  );
}

/** Columns padded to their widest cell, two spaces apart; `-` for null. */
export function table(headers: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [
    headers,
    ...rows.map((row) => row.map((c) => (c === null || c === undefined ? "-" : String(c)))),
  ];
  const width = (s: string) => [...s].length;
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => width(row[i] ?? ""))));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - width(cell))))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

/** `key: value` lines, keys aligned. */
export function fields(pairs: Array<[string, unknown]>): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs
    .map(([k, v]) => {
      const text = v === null || v === undefined ? "-" : Array.isArray(v) ? v.join(", ") || "-" : String(v);
      return `${`${k}:`.padEnd(width + 2)}${text}`;
    })
    .join("\n")
    .concat("\n");
}

export const printJson = (io: Io, value: unknown): void => {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};
