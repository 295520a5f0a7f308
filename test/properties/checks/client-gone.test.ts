/**
 * A client that goes away before its answer (a CI job's timeout, Ctrl-C): the deployed runtime then
 * tears the request down at once, and only what was handed to `waitUntil` runs on. The request
 * holds itself that way from its start (src/middleware/context.ts `requestContext`), so a write
 * committed before the client left still has what follows it: here a waiting deployment's timer,
 * which API_CONTRACT §31 wants deciding its check within 5 s of the timeout without any request.
 * The runtime of the tests runs a request to its end either way; what it would keep is what the
 * request handed to `waitUntil` before the client could leave, which is what is tested.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import { createApp } from "../../../src/app";
import type { EnvironmentGate } from "../../../src/gate/object";
import { TEST_CLIENT_IP } from "../../helpers/api";
import { checkedWorld } from "../../helpers/checks";
import { PATCH } from "../../helpers/engine";

it("a create whose client leaves at once still hands its waiting deployment's timer to the gate", async () => {
  const w = await checkedWorld([{ name: "soak", timeout: 600, on_timeout: "pass" }]);
  const kept: Promise<unknown>[] = [];
  const exec = {
    waitUntil: (work: Promise<unknown>) => void kept.push(work),
    passThroughOnException: () => undefined,
    props: {},
  } as unknown as ExecutionContext;
  const req = new Request(`http://api.test/internal/v1/environments/${w.environmentId}/deployments`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${env.ADMIN_TOKEN}`,
      "content-type": "application/json",
      "cf-connecting-ip": TEST_CLIENT_IP,
    },
    body: JSON.stringify({ stack_ids: [w.stack.id], data: { patch: PATCH } }),
  });
  const answer = Promise.resolve(createApp().fetch(req, env, exec));
  // The client leaves now: the runtime would run on only what the request has handed over so far.
  const heldAtOnce = kept.slice();
  expect(heldAtOnce.length).toBeGreaterThan(0);
  await Promise.all(heldAtOnce);
  const res = await answer;
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  const gate = env.ENVIRONMENT_GATES.get(env.ENVIRONMENT_GATES.idFromName(w.environmentId));
  const timers = await runInDurableObject(gate, (_object: EnvironmentGate, state) =>
    state.storage.sql.exec<{ deployment_id: string }>("SELECT deployment_id FROM timers").toArray(),
  );
  expect(timers.map((t) => t.deployment_id)).toContain(id);
  await Promise.all(kept);
});
