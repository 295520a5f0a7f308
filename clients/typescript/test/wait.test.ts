import { afterEach, describe, expect, it } from "vitest";
import { ApiError, createDeployClient, waitForDeployment } from "../src/index.js";
import { deployment, json, notFound, startFake } from "./fake-api.js";

const ID = "Dep1Dep1Dep1Dep1Dep1De";
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});
const client = (base: string) => createDeployClient({ baseUrl: base, apiKey: "dpk_test", maxAttempts: 1 });

describe("waitForDeployment()", () => {
  it("long-polls /wait with the time left (≤ 60 s) until the deployment is final", async () => {
    let waits = 0;
    const fake = await startFake((_req, res, url) => {
      if (url.pathname === `/v1/deployments/${ID}`) return json(res, 200, deployment(ID, "queued"));
      if (url.pathname === `/v1/deployments/${ID}/wait`) {
        waits++;
        return json(res, 200, deployment(ID, waits < 2 ? "in_progress" : "succeeded"));
      }
      notFound(res);
    });
    close = fake.close;
    const seen: string[] = [];
    const result = await waitForDeployment(client(fake.base), ID, {
      timeoutMs: 600_000,
      onUpdate: (d) => seen.push(d.status),
    });
    expect(result).toMatchObject({ timedOut: false, deployment: { status: "succeeded" } });
    expect(seen).toEqual(["queued", "in_progress", "succeeded"]);
    const polls = fake.seen.filter((s) => s.path.includes("/wait"));
    expect(polls.map((s) => s.path)).toEqual([
      `/v1/deployments/${ID}/wait?timeout=60`,
      `/v1/deployments/${ID}/wait?timeout=60`,
    ]);
  });

  it("answers at once for a final deployment, and times out with the last state", async () => {
    const fake = await startFake((_req, res, url) => {
      if (url.pathname === "/v1/deployments/Done") return json(res, 200, deployment("Done", "cancelled"));
      if (url.pathname.endsWith("/wait")) return json(res, 200, deployment(ID, "in_progress"));
      return json(res, 200, deployment(ID, "in_progress"));
    });
    close = fake.close;
    const done = await waitForDeployment(client(fake.base), "Done");
    expect(done).toMatchObject({ timedOut: false, deployment: { status: "cancelled" } });
    expect(fake.seen).toHaveLength(1);
    let clock = 0;
    const late = await waitForDeployment(client(fake.base), ID, {
      timeoutMs: 2500,
      now: () => {
        clock += 1000;
        return clock;
      },
    });
    expect(late).toMatchObject({ timedOut: true, deployment: { status: "in_progress" } });
    // 1.5 s left: a poll of 1.5 s; then 0.5 s, under the API's 1 s minimum: one plain read.
    expect(fake.seen.slice(1).map((s) => s.path)).toEqual([
      `/v1/deployments/${ID}`,
      `/v1/deployments/${ID}/wait?timeout=1.5`,
      `/v1/deployments/${ID}`,
    ]);
  });

  it("ends at timeoutMs: each long poll asks for exactly the time left, never past the deadline", async () => {
    let polledAt = 0;
    const fake = await startFake((_req, res, url) => {
      const d = deployment(ID, "in_progress");
      // As the API does: the poll answers after `timeout` seconds when nothing changes.
      if (url.pathname.endsWith("/wait")) {
        polledAt = Date.now();
        return void setTimeout(() => json(res, 200, d), Number(url.searchParams.get("timeout")) * 1000);
      }
      // The first read takes 300 ms: the poll after it must ask for what is left, not the whole.
      setTimeout(() => json(res, 200, d), 300);
    });
    close = fake.close;
    const started = Date.now();
    const result = await waitForDeployment(client(fake.base), ID, { timeoutMs: 2500 });
    const took = Date.now() - started;
    expect(result).toMatchObject({ timedOut: true, deployment: { status: "in_progress" } });
    expect(took).toBeGreaterThanOrEqual(2400);
    // Not a second poll nor a poll past the deadline (either would take seconds more); the slack is
    // a loaded machine's.
    expect(took).toBeLessThan(3500);
    const polls = fake.seen.filter((s) => s.path.includes("/wait"));
    expect(polls).toHaveLength(1);
    const asked = Number(new URL(polls[0]?.path ?? "", "http://x").searchParams.get("timeout"));
    // The time left when it was asked, to the millisecond: at least what was left when the fake
    // received it, at most what was left after the first read's 300 ms.
    expect(asked * 1000).toBeGreaterThanOrEqual(2500 - (polledAt - started) - 1);
    expect(asked).toBeLessThanOrEqual(2.2);
  });

  it("polls the deployment when the service does not serve /wait", async () => {
    let gets = 0;
    const fake = await startFake((_req, res, url) => {
      if (url.pathname === `/v1/deployments/${ID}`) {
        gets++;
        return json(res, 200, deployment(ID, gets < 3 ? "in_progress" : "failed"));
      }
      notFound(res);
    });
    close = fake.close;
    const sleeps: number[] = [];
    const result = await waitForDeployment(client(fake.base), ID, {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    expect(result.deployment.status).toBe("failed");
    expect(sleeps).toEqual([1000, 1500]);
  });

  it("throws the API's error for an unknown deployment", async () => {
    const fake = await startFake((_req, res) => notFound(res, "Deployment not found."));
    close = fake.close;
    await expect(waitForDeployment(client(fake.base), ID)).rejects.toBeInstanceOf(ApiError);
  });
});

describe("waitForDeployment() and a protected environment's `waiting` (API_CONTRACT §26)", () => {
  const gate = (blocked: string[]) => ({
    gate: { required_approvals: 1, approvals: 0, wait_until: null, blocked_by: blocked },
  });

  it("`waiting` is not final: it long-polls on through `waiting` and `queued` until the end", async () => {
    let waits = 0;
    const answers = [
      deployment(ID, "waiting", gate(["approval"])),
      deployment(ID, "queued", gate([])),
      deployment(ID, "in_progress", gate([])),
      deployment(ID, "succeeded", gate([])),
    ];
    const fake = await startFake((_req, res, url) => {
      if (url.pathname === `/v1/deployments/${ID}`) return json(res, 200, answers[0]);
      if (url.pathname === `/v1/deployments/${ID}/wait`) return json(res, 200, answers[Math.min(waits++, 3)]);
      notFound(res);
    });
    close = fake.close;
    const seen: string[] = [];
    const result = await waitForDeployment(client(fake.base), ID, { onUpdate: (d) => seen.push(d.status) });
    expect(result).toMatchObject({ timedOut: false, deployment: { status: "succeeded" } });
    expect(seen).toEqual(["waiting", "waiting", "queued", "in_progress", "succeeded"]);
  });

  it("a deployment still `waiting` at the deadline is answered timedOut, as it stands", async () => {
    const fake = await startFake((_req, res, url) => {
      const d = deployment(ID, "waiting", gate(["approval"]));
      if (url.pathname.endsWith("/wait"))
        return void setTimeout(() => json(res, 200, d), Number(url.searchParams.get("timeout")) * 1000);
      json(res, 200, d);
    });
    close = fake.close;
    const result = await waitForDeployment(client(fake.base), ID, { timeoutMs: 1200 });
    expect(result).toMatchObject({ timedOut: true, deployment: { status: "waiting" } });
  });

  it("a `waiting` deployment that a rejection cancels ends the wait: cancelled, not timed out", async () => {
    const fake = await startFake((_req, res, url) => {
      if (url.pathname.endsWith("/wait")) return json(res, 200, deployment(ID, "cancelled", gate([])));
      json(res, 200, deployment(ID, "waiting", gate(["approval"])));
    });
    close = fake.close;
    const result = await waitForDeployment(client(fake.base), ID);
    expect(result).toMatchObject({ timedOut: false, deployment: { status: "cancelled" } });
  });

  it("polling (a service without /wait) goes on through `waiting` too", async () => {
    let gets = 0;
    const fake = await startFake((_req, res, url) => {
      if (url.pathname === `/v1/deployments/${ID}`) {
        gets++;
        return json(res, 200, deployment(ID, gets < 3 ? "waiting" : gets < 4 ? "queued" : "succeeded"));
      }
      notFound(res);
    });
    close = fake.close;
    const result = await waitForDeployment(client(fake.base), ID, { sleep: async () => {} });
    expect(result).toMatchObject({ timedOut: false, deployment: { status: "succeeded" } });
    expect(gets).toBe(4);
  });
});
