/** The `Io` of the real process: its streams and environment, files on disk, its terminal. */
import { randomBytes } from "node:crypto";
import {
  appendFile,
  type FileHandle,
  mkdir,
  open,
  readFile,
  realpath,
  rename,
  rm,
  stat,
  writeFile,
} from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline/promises";
import { type Io, UsageError } from "./io.js";

export function nodeIo(signal: AbortSignal): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    signal,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    readFile: readUserFile,
    writePrivateFile,
    readFileIfExists: async (path) => {
      try {
        return await readFile(path, "utf8");
      } catch (err) {
        if (errno(err) === "ENOENT") return undefined;
        throw fileError("read", path, err);
      }
    },
    appendFile: async (path, text) => {
      try {
        await appendFile(path, text, "utf8");
      } catch (err) {
        throw fileError("write", path, err);
      }
    },
    ask: process.stdin.isTTY ? (question) => ask(question, signal) : undefined,
  };
}

/** One question on the terminal (the prompt on stderr: stdout is for results); Ctrl-C aborts. */
async function ask(question: string, signal: AbortSignal): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // readline takes Ctrl-C from the terminal itself: pass it on as the process's interruption.
  rl.on("SIGINT", () => process.emit("SIGINT"));
  try {
    return await rl.question(question, { signal });
  } finally {
    rl.close();
  }
}

/** A file the user named; one that cannot be read is bad usage, said with its name. */
export async function readUserFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    throw fileError("read", path, err);
  }
}

/**
 * Writes `text` to `path` so that no one but the owner can ever read it there: a new file made
 * mode 600 beside the target, then renamed over it. Changing the mode of an existing file would
 * not do: a process that opened it while it was readable keeps reading what is written into it.
 * A symbolic link is followed (the file it points to is replaced); a pipe or a terminal
 * (`-o /dev/stdout`) is written as it is, as nothing stays on disk there.
 */
export async function writePrivateFile(
  path: string,
  text: string,
  options: { makeDirectory?: boolean } = {},
): Promise<void> {
  // A directory made here is private too: it holds the key `login` writes.
  if (options.makeDirectory)
    await mkdir(dirname(path), { recursive: true, mode: 0o700 }).catch((err) => {
      throw fileError("write", path, err);
    });
  let target = path;
  try {
    target = await realpath(path);
  } catch (err) {
    if (errno(err) !== "ENOENT") throw fileError("write", path, err);
  }
  const existing = await stat(target).catch(() => null);
  if (existing && !existing.isFile()) {
    if (existing.isDirectory()) throw new UsageError(`cannot write ${path}: it is a directory`);
    try {
      return await writeFile(target, text);
    } catch (err) {
      throw fileError("write", path, err);
    }
  }
  const temp = join(dirname(target), `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, "wx", 0o600);
    await handle.writeFile(text, "utf8");
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, target);
  } catch (err) {
    await handle?.close().catch(() => {});
    await rm(temp, { force: true });
    throw fileError("write", path, err);
  }
}

const REASONS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "permission denied",
  EISDIR: "it is a directory",
  ENOTDIR: "a part of the path is not a directory",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
};

const errno = (err: unknown): string | undefined =>
  typeof err === "object" && err !== null && "code" in err && typeof err.code === "string"
    ? err.code
    : undefined;

/** A failed read or write of a file the user named, as a usage error that names it. */
function fileError(verb: "read" | "write", path: string, err: unknown): unknown {
  const code = errno(err);
  if (code === undefined) return err;
  const reason = REASONS[code] ?? (err instanceof Error ? err.message : code);
  return new UsageError(`cannot ${verb} ${path}: ${reason}`);
}
