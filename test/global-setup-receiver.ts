/**
 * A real local HTTP receiver for webhook tests, started once in Node before the Workers
 * runtime. Tests learn its origin through `inject("receiverOrigin")`.
 *
 *   POST /hooks/<bucket>[?status=500&retry_after=120&delay_ms=500]  records the request, answers `status`
 *   GET  /received/<bucket>                                          the recorded requests, oldest first
 *   POST /script/<bucket>  {"answers": [500, 410, …], "delay_ms": n}  the next requests of the bucket take
 *                                                                    these statuses in turn (then the query's),
 *                                                                    each after `delay_ms` (the URL of an audit
 *                                                                    stream cannot change between attempts)
 *
 * Buckets are per test, so files running at the same time never see each other's requests.
 * (Node's types are not part of this project's type check, so the few used are declared here.)
 */
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    receiverOrigin: string;
  }
}

type IncomingRequest = {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  on(event: "data", listener: (chunk: Uint8Array) => void): void;
  on(event: "end", listener: () => void): void;
};
type ServerResponse = {
  writeHead(status: number, headers: Record<string, string>): void;
  end(body?: string): void;
};
type Server = {
  listen(port: number, host: string, callback: () => void): void;
  address(): { port: number } | string | null;
  close(callback: () => void): void;
};
type NodeHttp = { createServer(handler: (req: IncomingRequest, res: ServerResponse) => void): Server };

export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** When it arrived (ms since the epoch, this machine's clock). */
  at: number;
};

export default async function setup(project: TestProject) {
  const http = (await import("node:http" as string)) as NodeHttp;
  const received = new Map<string, ReceivedRequest[]>();
  const scripts = new Map<string, { answers: number[]; delayMs: number }>();

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    const [, route, bucket = ""] = url.pathname.split("/");
    if (req.method === "GET" && route === "received") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received.get(bucket) ?? []));
      return;
    }
    const chunks: Uint8Array[] = [];
    req.on("data", (chunk) => chunks.push(chunk));
    if (req.method === "POST" && route === "script") {
      req.on("end", () => {
        const script = JSON.parse(new TextDecoder().decode(concat(chunks))) as {
          answers?: number[];
          delay_ms?: number;
        };
        scripts.set(bucket, { answers: [...(script.answers ?? [])], delayMs: script.delay_ms ?? 0 });
        res.writeHead(204, {});
        res.end();
      });
      return;
    }
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      const body = new TextDecoder().decode(concat(chunks));
      const list = received.get(bucket) ?? [];
      list.push({ method: req.method ?? "", path: url.pathname + url.search, headers, body, at: Date.now() });
      received.set(bucket, list);
      const script = scripts.get(bucket);
      const scripted = script?.answers.shift();
      const status = scripted ?? Number(url.searchParams.get("status") ?? 200);
      const answer: Record<string, string> = { "content-type": "text/plain" };
      const retryAfter = url.searchParams.get("retry_after");
      if (retryAfter) answer["retry-after"] = retryAfter;
      if (status >= 300 && status < 400) answer.location = `/hooks/${bucket}-redirected`;
      const delay = script ? script.delayMs : Number(url.searchParams.get("delay_ms") ?? 0);
      setTimeout(() => {
        res.writeHead(status, answer);
        res.end("ok");
      }, delay);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the webhook receiver has no port");
  project.provide("receiverOrigin", `http://127.0.0.1:${address.port}`);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}
