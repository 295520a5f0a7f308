/**
 * The work of following a deployment (API_CONTRACT §19), counted on the real bindings
 * (test/helpers/work-counts.ts): a live stream and a wait cost one round trip and one subscription
 * to open, then nothing while they wait.
 */
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/app";
import { postLogs, reportOk } from "../../helpers/engine";
import { createDeployment, createProjectWithStack } from "../../helpers/factories";
import { nextEntries, openStream, readToEnd } from "../../helpers/sse";
import { until } from "../../helpers/wait";
import { type Counts, countingBindings, freshKey, measure } from "../../helpers/work-counts";

describe("following a deployment (API_CONTRACT §19): a live stream and a wait", () => {
  const fresh = (): Counts => ({ d1Statements: 0, d1RoundTrips: 0, limiterCalls: 0, sessions: [] });

  it("cost one D1 round trip and one subscription to open, then no query: not while idle, not for the changes pushed to them, not to end", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key

    const streamCounts = fresh();
    const stream = await openStream(`/v1/deployments/${deployment.id}/timeline`, key, {}, async (req) =>
      createApp().fetch(req, countingBindings(streamCounts), createExecutionContext()),
    );
    const openedAt = Date.now();
    await nextEntries(stream, 1);
    const waiting = measure(`/v1/deployments/${deployment.id}/wait?timeout=60`, key);
    // The lookup that authorizes it and the first entries in one batch; once they are sent, the
    // feed's subscription.
    const opened = { d1Statements: 2, d1RoundTrips: 1, limiterCalls: 1, feedCalls: 1 };
    // Idle: a keep-alive comment (at most 15 s apart), and no query meanwhile.
    expect(await stream.nextComment(15_000)).toBe(": keep-alive");
    expect(streamCounts).toMatchObject(opened);

    // Changes reach it with their entries: still no query.
    await postLogs(deployment.id, [{ message: "pushed, not read" }]);
    await reportOk(deployment.id, { status: "in_progress" });
    expect((await nextEntries(stream, 2)).map((e) => e.seq)).toEqual([2, 3]);
    const done = await reportOk(deployment.id, { status: "succeeded" });
    expect((await readToEnd(stream)).end).toEqual(done);
    const { placeCalls, ...rest } = streamCounts;
    expect(rest).toMatchObject(opened);
    // Its place among its key family's (§33): renewed every 5 s (a limiter call, no query), given back at the end.
    const renewals = Math.floor((Date.now() - openedAt) / 5000);
    expect(placeCalls?.renew).toBeGreaterThanOrEqual(renewals - 1);
    expect(placeCalls?.renew).toBeLessThanOrEqual(renewals + 1);
    await until("the place given back", async () => streamCounts.placeCalls?.release === 1);

    // The wait: its lookup, its subscription, and the final record pushed to it.
    expect(await waiting).toMatchObject({
      status: 200,
      d1Statements: 1,
      d1RoundTrips: 1,
      limiterCalls: 1,
      feedCalls: 1,
    });
  });

  it("a stream or a wait of a final deployment reads once and never subscribes", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const deployment = await createDeployment(environmentId, [stack.id]);
    await reportOk(deployment.id, { status: "cancelled" });
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const once = { status: 200, d1RoundTrips: 1, limiterCalls: 1, sessions: ["first-unconstrained"] };
    const streamed = await measure(`/v1/deployments/${deployment.id}/timeline`, key, {
      headers: { accept: "text/event-stream" },
    });
    // Its place among its key family's (§33) is taken with the decision and given back as it ends.
    expect(streamed).toEqual({ ...once, d1Statements: 2, placeCalls: { renew: 0, release: 1 } });
    expect(await measure(`/v1/deployments/${deployment.id}/wait`, key)).toEqual({ ...once, d1Statements: 1 });
  });
});
