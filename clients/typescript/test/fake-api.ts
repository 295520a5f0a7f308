/**
 * A stand-in for the API on a real socket, answering in the contract's shapes (API_CONTRACT
 * §18–§21) for what the service does not serve yet, so that streaming, dropped connections and
 * long polls are exercised through node's own fetch.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Io } from "../src/cli/io.js";

export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => unknown;
export type Seen = { method: string; path: string; headers: IncomingMessage["headers"]; body: string };

export async function startFake(handler: Handler) {
  const seen: Seen[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const url = new URL(req.url ?? "/", "http://fake");
    seen.push({ method: req.method ?? "", path: url.pathname + url.search, headers: req.headers, body });
    res.setHeader("x-request-id", `req-${seen.length}`);
    try {
      await handler(req, res, url, body);
    } catch (err) {
      if (!res.headersSent) json(res, 500, { code: "internal", message: String(err) });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function json(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(value));
}

export const notFound = (res: ServerResponse, message = "No such endpoint.") =>
  json(res, 404, { code: "not_found", message });

export function deployment(id: string, status: string, extra: Record<string, unknown> = {}) {
  const final = ["succeeded", "failed", "cancelled"].includes(status);
  return {
    id,
    environment_id: "EnvEnvEnvEnvEnvEnvEnv1",
    stack_ids: [],
    status,
    data: { patch: [] },
    started_at: status === "queued" ? null : "2026-11-22T10:04:05.123Z",
    finished_at: final ? "2026-11-22T10:05:05.123Z" : null,
    created_at: "2026-11-22T10:04:00.000Z",
    updated_at: "2026-11-22T10:05:05.123Z",
    redeploy_of: null,
    ...extra,
  };
}

export function entry(seq: number, extra: Record<string, unknown> = {}) {
  return {
    seq,
    type: "log",
    created_at: `2026-11-22T10:04:${String(seq % 60).padStart(2, "0")}.000Z`,
    stack_id: null,
    status: null,
    status_reason: null,
    stream: "stdout",
    message: `line ${seq}`,
    ...extra,
  };
}

/** One SSE event as the contract frames it. */
export const sse = (e: { seq: number; type: string }) =>
  `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/** A terminal to run the CLI in: what it wrote, and the files it read and wrote. */
export function fakeIo(
  base: string,
  options: {
    tty?: boolean;
    files?: Record<string, string>;
    stdin?: string;
    /** The replies a person types at the terminal, in turn; without it, no terminal to ask on. */
    answers?: string[];
  } = {},
) {
  const out: string[] = [];
  const err: string[] = [];
  /** Both streams' writes in the order they were made. */
  const writes: Array<["stdout" | "stderr", string]> = [];
  const files: Record<string, string> = { ...(options.files ?? {}) };
  const modes: Record<string, string> = {};
  const questions: string[] = [];
  const answers = options.answers ? [...options.answers] : undefined;
  const io: Io = {
    stdout: { write: (t: string) => writes.push(["stdout", t]) && out.push(t), isTTY: options.tty ?? false },
    stderr: { write: (t: string) => writes.push(["stderr", t]) && err.push(t), isTTY: options.tty ?? false },
    env: { DEPLOY_PLATFORM_URL: base, DEPLOY_PLATFORM_API_KEY: "dpk_test" },
    readStdin: async () => options.stdin ?? "",
    sleep: async () => {},
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: ${path}`);
      return text;
    },
    writePrivateFile: async (path, text) => {
      files[path] = text;
      modes[path] = "600";
    },
    readFileIfExists: async (path) => files[path],
    appendFile: async (path, text) => {
      files[path] = (files[path] ?? "") + text;
    },
    ask: answers
      ? async (question) => {
          questions.push(question);
          return answers.shift() ?? "";
        }
      : undefined,
  };
  return { io, stdout: () => out.join(""), stderr: () => err.join(""), writes, files, modes, questions };
}
