/**
 * Live streams (API_CONTRACT §19) read as a client reads them: the response of the real Worker,
 * its body read chunk by chunk, every event checked against /openapi.json (`x-sse-events`).
 */
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { TimelineEntry } from "../../src/schemas/timeline";
import { TEST_CLIENT_IP } from "./api";
import {
  expectDocumentedEvents,
  expectDocumentedHeaders,
  parseEventStream,
  pathTemplateOf,
  type StreamEvent,
} from "./openapi";

export type { StreamEvent };

export type LiveStream = {
  status: number;
  headers: Headers;
  /** The body as JSON when the request was refused (status ≠ 200). */
  error: unknown;
  /** The next event; null once the stream closed; throws after `timeoutMs` without one. */
  next(timeoutMs?: number): Promise<StreamEvent | null>;
  /** Comment lines received so far (`: keep-alive`). */
  comments: string[];
  /** Waits for the next comment line (events meanwhile are kept for `next`); throws after `timeoutMs`. */
  nextComment(timeoutMs?: number): Promise<string>;
  /** Drops the connection, as a client that goes away. */
  cancel(): Promise<void>;
};

/** Opens `GET path` with `Accept: text/event-stream` (on `fetcher`: the Worker by default). */
export async function openStream(
  path: string,
  key: string,
  headers: Record<string, string> = {},
  fetcher: (req: Request) => Promise<Response> = (req) => exports.default.fetch(req),
): Promise<LiveStream> {
  const res = await fetcher(
    new Request(`http://api.test${path}`, {
      headers: {
        accept: "text/event-stream",
        "x-api-key": key,
        "cf-connecting-ip": TEST_CLIENT_IP,
        ...headers,
      },
    }),
  );
  const template = await pathTemplateOf("GET", path);
  if (!template) throw new Error(`${path} is no operation of /openapi.json`);
  await expectDocumentedHeaders("GET", template, res.status, res.headers);
  if (res.status !== 200 || !res.body) {
    return {
      status: res.status,
      headers: res.headers,
      error: JSON.parse(await res.text()),
      next: async () => null,
      comments: [],
      nextComment: async () => {
        throw new Error("a refused stream sends no comment");
      },
      cancel: async () => undefined,
    };
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  const comments: string[] = [];
  const queue: StreamEvent[] = [];
  let buffer = "";
  let done = false;
  const pull = async (timeoutMs: number) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk.done) {
        done = true;
        return;
      }
      buffer += decoder.decode(chunk.value, { stream: true });
      const end = buffer.lastIndexOf("\n\n");
      if (end < 0) return;
      const complete = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      for (const block of complete.split("\n\n")) {
        if (block.startsWith(":")) comments.push(block);
      }
      const events = parseEventStream(complete);
      await expectDocumentedEvents("GET", template, 200, events);
      queue.push(...events);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    status: res.status,
    headers: res.headers,
    error: null,
    comments,
    async next(timeoutMs = 5000) {
      while (queue.length === 0 && !done) await pull(timeoutMs);
      return queue.shift() ?? null;
    },
    async nextComment(timeoutMs = 5000) {
      const seen = comments.length;
      while (comments.length === seen) {
        if (done) throw new Error("the stream closed without another comment");
        await pull(timeoutMs);
      }
      return comments[seen] as string;
    },
    async cancel() {
      await reader.cancel();
    },
  };
}

/** Reads the stream to its `end`: the entries, in order, and the record `end` carried. */
export async function readToEnd(stream: LiveStream, timeoutMs = 5000) {
  const entries: TimelineEntry[] = [];
  for (;;) {
    const event = await stream.next(timeoutMs);
    if (!event) return { entries, end: null };
    if (event.event === "end") {
      const end = JSON.parse(event.data) as DeploymentRecord;
      if ((await stream.next(timeoutMs)) !== null) throw new Error("an event after `end`");
      return { entries, end };
    }
    const entry = JSON.parse(event.data) as TimelineEntry;
    if (event.id !== String(entry.seq))
      throw new Error(`event id ${event.id} is not the entry's seq ${entry.seq}`);
    entries.push(entry);
  }
}

/** The next `n` entries of a stream. */
export async function nextEntries(stream: LiveStream, n: number, timeoutMs = 5000): Promise<TimelineEntry[]> {
  const out: TimelineEntry[] = [];
  while (out.length < n) {
    const event = await stream.next(timeoutMs);
    if (!event) throw new Error(`the stream closed after ${out.length} of ${n} entries`);
    if (event.event === "end") throw new Error(`the stream ended after ${out.length} of ${n} entries`);
    out.push(JSON.parse(event.data) as TimelineEntry);
  }
  return out;
}

/** The deployment's feed object (src/feed/object.ts). */
export const feedOf = (deploymentId: string) =>
  env.DEPLOYMENT_FEED.get(env.DEPLOYMENT_FEED.idFromName(deploymentId));

/** The sockets the deployment's feed object holds (its open streams and waits). */
export const openSockets = (deploymentId: string) =>
  runInDurableObject(feedOf(deploymentId), (_, state) => state.getWebSockets().length);
