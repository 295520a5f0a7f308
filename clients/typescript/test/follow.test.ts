import { afterEach, describe, expect, it } from "vitest";
import { ApiError, createDeployClient, type FollowEvent, follow } from "../src/index.js";
import { deployment, entry, json, notFound, type Seen, sse, startFake } from "./fake-api.js";

const ID = "Dep1Dep1Dep1Dep1Dep1De";
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const client = (base: string) =>
  createDeployClient({ baseUrl: base, apiKey: "dpk_test", sleep: async () => {}, maxAttempts: 1 });

async function collect(stream: AsyncGenerator<FollowEvent>) {
  const out: FollowEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}
const seqs = (events: FollowEvent[]) => events.flatMap((e) => (e.type === "entry" ? [e.entry.seq] : []));
const streams = (seen: Seen[]) => seen.filter((s) => s.path.startsWith(`/v1/deployments/${ID}/timeline`));

describe("follow()", () => {
  it("resumes a dropped stream with Last-Event-ID and yields every entry once, in order", async () => {
    let connection = 0;
    const fake = await startFake((req, res) => {
      connection++;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      if (connection === 1) {
        // Three entries and a keep-alive, then the connection dies mid-event.
        res.write(
          `: hi\n\n${sse(entry(1))}${sse(entry(2, { type: "status", status: "in_progress" }))}${sse(entry(3))}`,
        );
        res.write('id: 4\nevent: log\ndata: {"seq":4,');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
      // The server sends 3 again (a resend a client must not repeat), then the rest and `end`.
      res.write(sse(entry(3)) + sse(entry(4)) + sse(entry(5)));
      res.end(`event: end\ndata: ${JSON.stringify(deployment(ID, "succeeded"))}\n\n`);
    });
    close = fake.close;
    const reconnects: number[] = [];
    const events = await collect(
      follow(client(fake.base), ID, { onReconnect: ({ afterSeq }) => reconnects.push(afterSeq) }),
    );
    expect(seqs(events)).toEqual([1, 2, 3, 4, 5]);
    expect(events.at(-1)).toMatchObject({ type: "end", deployment: { status: "succeeded" } });
    expect(reconnects).toEqual([3]);
    const [first, second] = streams(fake.seen);
    expect(first?.headers.accept).toBe("text/event-stream");
    expect(first?.headers["last-event-id"]).toBeUndefined();
    expect(second?.headers["last-event-id"]).toBe("3");
    expect(second?.headers["x-api-key"]).toBe("dpk_test");
  });

  it("starts after afterSeq, and reconnects when the server closes a stream without end", async () => {
    let connection = 0;
    const fake = await startFake((_req, res) => {
      connection++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (connection === 1) return res.end(sse(entry(8)));
      res.end(`${sse(entry(9))}event: end\ndata: ${JSON.stringify(deployment(ID, "failed"))}\n\n`);
    });
    close = fake.close;
    const events = await collect(follow(client(fake.base), ID, { afterSeq: 7 }));
    expect(seqs(events)).toEqual([8, 9]);
    expect(streams(fake.seen).map((s) => s.headers["last-event-id"])).toEqual(["7", "8"]);
  });

  it("throws the API's error at once for a 4xx, without reconnecting", async () => {
    const fake = await startFake((_req, res) => notFound(res, "Deployment not found."));
    close = fake.close;
    const error = await collect(follow(client(fake.base), ID)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).body.code).toBe("not_found");
    expect(fake.seen).toHaveLength(1);
  });

  it("refuses an answer that is not an event stream (a proxy that dropped the Accept header)", async () => {
    const fake = await startFake((_req, res) => json(res, 200, { data: [entry(1)], has_more: false }));
    close = fake.close;
    await expect(collect(follow(client(fake.base), ID))).rejects.toThrow(
      /came as application\/json, not an event stream/,
    );
    expect(fake.seen).toHaveLength(1);
  });

  it("gives up after maxReconnects streams in a row that bring nothing, backing off between them", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(": nothing\n\n");
    });
    close = fake.close;
    const delays: number[] = [];
    const stream = follow(client(fake.base), ID, {
      maxReconnects: 3,
      random: () => 0,
      sleep: async (ms) => {
        delays.push(ms);
      },
    });
    await expect(collect(stream)).rejects.toThrow(/failed 4 times in a row/);
    expect(fake.seen).toHaveLength(4);
    expect(delays).toEqual([250, 500, 1000]);
  });

  it("stops when its signal aborts", async () => {
    const fake = await startFake((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sse(entry(1)));
    });
    close = fake.close;
    const controller = new AbortController();
    const got: number[] = [];
    await expect(
      (async () => {
        for await (const e of follow(client(fake.base), ID, { signal: controller.signal })) {
          if (e.type === "entry") got.push(e.entry.seq);
          controller.abort(new Error("enough"));
        }
      })(),
    ).rejects.toThrow(/enough|abort/);
    expect(got).toEqual([1]);
  });
});

describe("follow() and a protected environment's `waiting` (API_CONTRACT §26)", () => {
  it("a `waiting` entry is not the end: it follows on, across a dropped stream, through `queued` until `end`", async () => {
    let connection = 0;
    const fake = await startFake((req, res) => {
      connection++;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" });
      if (connection === 1) {
        // The creation entry reads `waiting`; the stream then idles (keep-alive) and drops.
        res.write(
          `${sse(entry(1, { type: "status", status: "waiting", message: null, stream: null }))}: keep-alive\n\n`,
        );
        setTimeout(() => req.socket.destroy(), 30);
        return;
      }
      res.write(sse(entry(2, { type: "status", status: "queued", message: null, stream: null })));
      res.write(sse(entry(3, { type: "status", status: "in_progress", message: null, stream: null })));
      res.write(sse(entry(4, { type: "status", status: "succeeded", message: null, stream: null })));
      res.end(`event: end\ndata: ${JSON.stringify(deployment(ID, "succeeded"))}\n\n`);
    });
    close = fake.close;
    const events = await collect(follow(client(fake.base), ID));
    const statuses = events.flatMap((e) => (e.type === "entry" ? [e.entry.status] : []));
    expect(statuses).toEqual(["waiting", "queued", "in_progress", "succeeded"]);
    expect(events.at(-1)).toMatchObject({ type: "end", deployment: { status: "succeeded" } });
    expect(streams(fake.seen).map((s) => s.headers["last-event-id"])).toEqual([undefined, "1"]);
  });

  it("a stream that closes while the deployment is still `waiting` (the server's time limit) is reopened, not ended", async () => {
    let connection = 0;
    const fake = await startFake((_req, res) => {
      connection++;
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (connection === 1) return res.end(sse(entry(1, { type: "status", status: "waiting" })));
      res.write(sse(entry(2, { type: "status", status: "cancelled", status_reason: "Rejected." })));
      res.end(`event: end\ndata: ${JSON.stringify(deployment(ID, "cancelled"))}\n\n`);
    });
    close = fake.close;
    const events = await collect(follow(client(fake.base), ID));
    expect(seqs(events)).toEqual([1, 2]);
    expect(events.at(-1)).toMatchObject({ type: "end", deployment: { status: "cancelled" } });
    expect(connection).toBe(2);
  });
});
