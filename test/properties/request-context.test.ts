/**
 * The service context (src/context.ts): one per request, queue message and cron run, and its
 * logger names what it serves, so every line a request or a message writes can be traced back.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { afterEach, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { brokenRateLimiter, request } from "../helpers/api";
import { createOrgWithOwner } from "../helpers/factories";

afterEach(() => vi.restoreAllMocks());

const loggedLines = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);

it("a service's log line carries the request's x-request-id", async () => {
  const { owner } = await createOrgWithOwner();
  const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
  // A limiter that throws: the rate-limit middleware logs through the request's context and fails open.
  const res = await request("GET", "/v1/orgs", {
    key: owner.key,
    headers: { "x-request-id": "ctx-trace-1" },
    bindings: { RATE_LIMITER: brokenRateLimiter("limiter down") },
  });
  expect(res.status).toBe(200);
  expect(loggedLines(errors)).toContainEqual(
    expect.objectContaining({ msg: "rate limiter unavailable; failing open", request_id: "ctx-trace-1" }),
  );
});

it("the queue consumer logs each message under the message's id", async () => {
  const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
  const batch = createMessageBatch("deploy-platform-events", [
    { id: "msg-ctx-1", timestamp: new Date(), attempts: 1, body: { kind: "no.such.kind" } },
  ]);
  const exec = createExecutionContext();
  await worker.queue(batch as MessageBatch<unknown>, env, exec);
  const result = await getQueueResult(batch, exec);
  expect(result.explicitAcks).toEqual(["msg-ctx-1"]);
  expect(loggedLines(errors)).toContainEqual(
    expect.objectContaining({ msg: "dropping queue message of unknown kind", request_id: "msg-ctx-1" }),
  );
});
