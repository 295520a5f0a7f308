/**
 * Live streams over time (API_CONTRACT §19), through the real Worker, D1 and DeploymentFeed
 * object: clients that drop and reconnect see every entry exactly once; dropped streams release
 * their socket at once; the feed's object hibernating, restarting, or missing a notification
 * loses nothing.
 */
import { createExecutionContext, env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import type { TimelineEntry } from "../../../src/schemas/timeline";
import { request } from "../../helpers/api";
import { deploymentOfStacks, logLines, postLogs, reportOk, timelineOf } from "../../helpers/engine";
import { addProjectMember, createApiKey, createCaller, createDeployment } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { feedOf, nextEntries, openSockets, openStream, readToEnd } from "../../helpers/sse";
import { sleep, until } from "../../helpers/wait";

const world = deploymentOfStacks;

/**
 * A stream of the deployment whose first entry was read and which has subscribed to the feed;
 * `next` is its next `n` entries, awaited by the test.
 */
async function subscribedStream(path: string, key: string, deploymentId: string, n: number) {
  const stream = await openStream(path, key);
  await nextEntries(stream, 1);
  const next = nextEntries(stream, n, 10_000);
  await until("subscribed", async () => (await openSockets(deploymentId)) === 1);
  return { stream, next };
}

/**
 * A client that follows to the end, dropping its connection after `dropAfter()` events each time
 * and reconnecting with `Last-Event-ID`, as EventSource does.
 */
async function followWithDrops(path: string, key: string, dropAfter: () => number) {
  const seen: TimelineEntry[] = [];
  let connections = 0;
  for (;;) {
    connections++;
    const last = seen[seen.length - 1];
    const stream = await openStream(path, key, last ? { "last-event-id": String(last.seq) } : {});
    expect(stream.status).toBe(200);
    const budget = dropAfter();
    for (let taken = 0; ; taken++) {
      if (taken === budget) {
        await stream.cancel();
        break;
      }
      const event = await stream.next(10_000);
      if (!event) break;
      if (event.event === "end") {
        return { seen, end: JSON.parse(event.data) as DeploymentRecord, connections };
      }
      seen.push(JSON.parse(event.data) as TimelineEntry);
    }
  }
}

describe("a client that drops and reconnects", () => {
  it("sees every entry exactly once, in order, while the engine writes", async () => {
    const { owner, stacks, deployment, path } = await world(3);
    const engine = (async () => {
      for (let i = 0; i < 12; i++) {
        await postLogs(deployment.id, logLines(1 + (i % 4), `batch ${i}`));
        if (i === 3) await reportOk(deployment.id, { status: "in_progress" });
        if (i === 6)
          await reportOk(deployment.id, {
            status: "in_progress",
            stacks: [{ id: stacks[1], status: "failed" }],
          });
        await sleep(15);
      }
      return reportOk(deployment.id, { status: "succeeded" });
    })();
    // Drops after 1–7 events each time (a fixed cycle, so a failure replays).
    let n = 0;
    const client = followWithDrops(path, owner.key, () => 1 + (n++ % 7));
    const [done, followed] = await Promise.all([engine, client]);
    const timeline = await timelineOf(owner.key, deployment.id);
    expect(followed.seen).toEqual(timeline);
    expect(followed.seen.map((e) => e.seq)).toEqual(timeline.map((_, i) => i + 1));
    expect(followed.end).toEqual(done);
    expect(followed.connections).toBeGreaterThan(3);
  });
});

describe("the feed's sockets", () => {
  it("200 streams opened, pushed to, and dropped leave the object no socket", async () => {
    const { owner, deployment, path } = await world(1);
    // 20 keys of the owner's, each a family of its own with its 10 places (§33).
    const keys = await Promise.all(Array.from({ length: 20 }, () => createApiKey(owner)));
    const streams = await Promise.all(
      Array.from({ length: 200 }, (_, i) => openStream(path, (keys[i % 20] as typeof owner).key)),
    );
    // Each subscribes once it has sent what D1 held (its first entry), as its client reads on.
    await Promise.all(streams.map((s) => nextEntries(s, 1)));
    const pending = streams.map((s) => nextEntries(s, 1, 10_000));
    await until("200 subscriptions", async () => (await openSockets(deployment.id)) === 200, 10_000);
    await postLogs(deployment.id, [{ message: "to all" }]);
    for (const entries of await Promise.all(pending)) expect(entries[0]?.message).toBe("to all");
    await Promise.all(streams.map((s) => s.cancel()));
    await until("every socket released", async () => (await openSockets(deployment.id)) === 0);
  });

  it("a wait that ends releases its socket; so does one whose deployment is final", async () => {
    const { owner, deployment } = await world(1);
    const wait = request<DeploymentRecord>("GET", `/v1/deployments/${deployment.id}/wait?timeout=20`, {
      key: owner.key,
    });
    await until("the wait's subscription", async () => (await openSockets(deployment.id)) === 1);
    await reportOk(deployment.id, { status: "cancelled" });
    expect((await wait).body.status).toBe("cancelled");
    await until("its socket released", async () => (await openSockets(deployment.id)) === 0);
  });
});

describe("the feed's object: hibernating, restarting, missing a notification", () => {
  // The broken feed's notification failure is logged on purpose.
  const errors = captureLogs("error");

  it("evicted while idle (hibernation), it wakes on the next write and its streams still get it", async () => {
    const { owner, deployment, path } = await world(1);
    const { stream, next } = await subscribedStream(path, owner.key, deployment.id, 2);
    await evictDurableObject(feedOf(deployment.id));
    await postLogs(deployment.id, logLines(2, "after sleep"));
    expect((await next).map((e) => e.message)).toEqual(["after sleep 1", "after sleep 2"]);
    await stream.cancel();
  });

  it("restarted with its sockets closed, its streams subscribe again and read what they missed, once", async () => {
    const { owner, deployment, path } = await world(1);
    const { stream, next } = await subscribedStream(path, owner.key, deployment.id, 3);
    await evictDurableObject(feedOf(deployment.id), { webSockets: "close" });
    await postLogs(deployment.id, logLines(3, "meanwhile"));
    expect((await next).map((e) => e.seq)).toEqual([2, 3, 4]);
    await reportOk(deployment.id, { status: "cancelled" });
    const rest = await readToEnd(stream, 10_000);
    expect(rest.entries.map((e) => e.seq)).toEqual([5, 6]);
    expect(rest.end?.status).toBe("cancelled");
  });

  it("a notification lost on the way is made up by the next one: the stream reads the gap from D1", async () => {
    const { owner, deployment, path } = await world(1);
    const { stream, next } = await subscribedStream(path, owner.key, deployment.id, 3);
    const unreachable = {
      idFromName: (name: string) => env.DEPLOYMENT_FEED.idFromName(name),
      get: () => ({ notify: () => Promise.reject(new Error("feed unreachable")) }),
    } as unknown as Env["DEPLOYMENT_FEED"];
    const lost = await request("POST", `/internal/v1/deployments/${deployment.id}/logs`, {
      body: { lines: [{ message: "never pushed" }] },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      bindings: { DEPLOYMENT_FEED: unreachable },
    });
    expect(lost.status).toBe(202);
    // The notice was lost indeed (told after the answer, in its waitUntil).
    await expect
      .poll(() => errors.lines().filter((l) => l.msg === "deployment feed notification failed"))
      .toContainEqual(expect.objectContaining({ deployment_id: deployment.id }));
    await postLogs(deployment.id, logLines(2, "pushed"));
    expect((await next).map((e) => e.message)).toEqual(["never pushed", "pushed 1", "pushed 2"]);
    await stream.cancel();
  });

  it("a write that lands before a stream subscribes is announced by the feed's first message", async () => {
    const { owner, deployment, path } = await world(1);
    // The stream's subscription is held until the write has reached the feed (no one to push to).
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slowToSubscribe = {
      idFromName: (name: string) => env.DEPLOYMENT_FEED.idFromName(name),
      get: (id: DurableObjectId) => {
        const stub = env.DEPLOYMENT_FEED.get(id);
        return {
          fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
            await held;
            return stub.fetch(input, init);
          },
        };
      },
    } as unknown as Env["DEPLOYMENT_FEED"];
    const stream = await openStream(path, owner.key, {}, async (req) =>
      createApp().fetch(req, { ...env, DEPLOYMENT_FEED: slowToSubscribe }, createExecutionContext()),
    );
    await nextEntries(stream, 1);
    const next = nextEntries(stream, 1, 10_000);
    await postLogs(deployment.id, logLines(1, "before the subscription"));
    expect(await openSockets(deployment.id)).toBe(0);
    release();
    expect((await next).map((e) => e.message)).toEqual(["before the subscription 1"]);
    await stream.cancel();
  });
});

describe("a deployment deleted with its project while followed", () => {
  const deleteProject = async (projectId: string, key: string) =>
    expect((await request("DELETE", `/v1/projects/${projectId}`, { key })).status).toBe(204);

  it("ends its waits with 404 and its streams without `end`, at once", async () => {
    const { owner, project, deployment, path } = await world(1);
    const stream = await openStream(path, owner.key);
    await nextEntries(stream, 1);
    const started = Date.now();
    const wait = request("GET", `/v1/deployments/${deployment.id}/wait?timeout=20`, { key: owner.key });
    // Both subscribed: the stream after sending its first entry, the wait after its lookup.
    await until("both subscribed", async () => (await openSockets(deployment.id)) === 2);
    await deleteProject(project.id, owner.key);

    const waited = await wait;
    expect(waited.status).toBe(404);
    expect((waited.body as { code: string }).code).toBe("not_found");
    expect(await stream.next(5000)).toBeNull();
    expect(Date.now() - started).toBeLessThan(5000);
    await until("every socket released", async () => (await openSockets(deployment.id)) === 0);
    // The client's reconnection, as EventSource makes it.
    const again = await openStream(path, owner.key, { "last-event-id": "1" });
    expect(again.status).toBe(404);
  });

  it("tells a follower that subscribes after the deletion (it read D1 just before)", async () => {
    const { owner, project, deployment } = await world(1);
    await deleteProject(project.id, owner.key);
    await until("the feed knows", () =>
      runInDurableObject(feedOf(deployment.id), (_, state) =>
        Boolean((state.storage.kv.get("state") as { deleted?: true } | undefined)?.deleted),
      ),
    );
    const res = await feedOf(deployment.id).fetch("https://feed.internal/subscribe", {
      headers: { upgrade: "websocket" },
    });
    const socket = res.webSocket as WebSocket;
    const hello = new Promise<string>((resolve) =>
      socket.addEventListener("message", (event) => resolve(String(event.data))),
    );
    socket.accept();
    expect(JSON.parse(await hello)).toMatchObject({ deleted: true });
    socket.close(1000, "done");
  });

  it("tells only deployments that may still be followed: a final one's feed is not woken", async () => {
    const { owner, project, deployment, environmentId, stacks } = await world(1);
    await reportOk(deployment.id, { status: "cancelled" });
    const queued = await createDeployment(environmentId, stacks);
    await deleteProject(project.id, owner.key);
    const deletedFlag = (id: string) =>
      runInDurableObject(feedOf(id), (_, state) =>
        Boolean((state.storage.kv.get("state") as { deleted?: true } | undefined)?.deleted),
      );
    await until("the queued deployment's feed knows", () => deletedFlag(queued.id));
    expect(await deletedFlag(deployment.id)).toBe(false);
  });
});

describe("a stream whose key or access ends while it is open", () => {
  /** The Worker with streams that check their key and access before every send (src/config.ts). */
  const checking = async (req: Request) =>
    createApp().fetch(req, { ...env, STREAM_RECHECK_MS_OVERRIDE: "1" }, createExecutionContext());

  it("goes on while both hold, to its `end`", async () => {
    const { owner, deployment, path } = await world(1);
    const stream = await openStream(path, owner.key, {}, checking);
    await nextEntries(stream, 1);
    await postLogs(deployment.id, [{ message: "still allowed" }]);
    expect((await nextEntries(stream, 1))[0]?.message).toBe("still allowed");
    const done = await reportOk(deployment.id, { status: "cancelled" });
    expect((await readToEnd(stream)).end).toEqual(done);
  });

  it("ends without sending once its key is revoked; the reconnection is 401", async () => {
    const { owner, deployment, path } = await world(1);
    const ci = await createApiKey(owner);
    const stream = await openStream(path, ci.key, {}, checking);
    await nextEntries(stream, 1);
    // Its client reads on, so the stream subscribes and waits.
    const next = stream.next(10_000);
    await until("subscribed", async () => (await openSockets(deployment.id)) === 1);
    expect((await request("DELETE", `/v1/api-keys/${ci.keyId}`, { key: owner.key })).status).toBe(204);
    await postLogs(deployment.id, [{ message: "after the revocation" }]);
    expect(await next).toBeNull();
    expect((await openStream(path, ci.key, { "last-event-id": "1" }, checking)).status).toBe(401);
  });

  it("ends without sending once its account leaves the project; the reconnection is 404", async () => {
    const { org, owner, project, deployment, path } = await world(1);
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const stream = await openStream(path, viewer.key, {}, checking);
    await nextEntries(stream, 1);
    const next = stream.next(10_000);
    await until("subscribed", async () => (await openSockets(deployment.id)) === 1);
    const removed = await request("DELETE", `/v1/projects/${project.id}/members/${viewer.accountId}`, {
      key: owner.key,
    });
    expect(removed.status).toBe(204);
    await postLogs(deployment.id, [{ message: "after the removal" }]);
    expect(await next).toBeNull();
    expect((await openStream(path, viewer.key, { "last-event-id": "1" }, checking)).status).toBe(404);
  });
});
