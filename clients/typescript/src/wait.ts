/**
 * `waitForDeployment()`: block until a deployment is final, or a time limit passes. It long-polls
 * `GET /v1/deployments/{id}/wait` (API_CONTRACT §19: the server answers as soon as the deployment
 * is final, or after `timeout` seconds, 1–60, fractions allowed), so a wait costs one request a
 * minute. Each poll asks for exactly the time left, so the wait ends at `timeoutMs` (plus one
 * round trip), not after it; with less than the 1 s minimum left it reads the deployment once
 * instead. Against a service that does not serve that route (a `404` for a deployment that
 * `GET /v1/deployments/{id}` just found), it polls the deployment instead, backing off from 1 s
 * to 5 s.
 */
import type { DeployClient } from "./client.js";
import { ApiError, unwrapData } from "./errors.js";
import { defaultSleep } from "./retry.js";
import { type Deployment, isFinal } from "./types.js";

export type WaitOptions = {
  /**
   * Give up after this long, in ms (default 10 minutes): the answer comes by then, give or take
   * one request's round trip. A deployment not final by then is answered with `timedOut: true`.
   */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Every state seen, the first included (for a progress line). */
  onUpdate?: (deployment: Deployment) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
};

export type WaitResult = {
  deployment: Deployment;
  /** True when the time limit passed first: `deployment` is then as it last stood. */
  timedOut: boolean;
};

export async function waitForDeployment(
  client: DeployClient,
  id: string,
  options: WaitOptions = {},
): Promise<WaitResult> {
  const { signal } = options;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? defaultSleep;
  const deadline = now() + (options.timeoutMs ?? 600_000);
  const get = async () =>
    unwrapData(await client.GET("/v1/deployments/{id}", { params: { path: { id } }, signal })) as Deployment;

  let deployment = await get();
  options.onUpdate?.(deployment);
  let longPoll = true;
  let pollMs = 1000;
  while (!isFinal(deployment.status)) {
    const remaining = deadline - now();
    if (remaining <= 0) return { deployment, timedOut: true };
    if (longPoll) {
      if (remaining < 1000) {
        // The API's shortest long poll is 1 s: one more would end past the deadline. A plain
        // read instead, and the deployment as it stands.
        deployment = await get();
        options.onUpdate?.(deployment);
        return { deployment, timedOut: !isFinal(deployment.status) };
      }
      // Seconds, fractions included: the poll ends at the caller's deadline, not past it.
      const timeout = Math.min(60, Math.floor(remaining) / 1000);
      const result = await client.GET("/v1/deployments/{id}/wait", {
        params: { path: { id }, query: { timeout } },
        signal,
      });
      if (result.data) deployment = result.data;
      else if (result.response.status === 404 && result.error?.code === "not_found") {
        longPoll = false;
        continue;
      } else throw ApiError.from(result);
    } else {
      await sleep(Math.min(pollMs, remaining), signal);
      pollMs = Math.min(5000, pollMs * 1.5);
      deployment = await get();
    }
    options.onUpdate?.(deployment);
  }
  return { deployment, timedOut: false };
}
