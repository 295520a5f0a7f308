/**
 * waitForDeployment: GET /v1/deployments/{id}/wait (API_CONTRACT §19): the record as soon as it is
 * final, or as it stands after `timeout` seconds. Its cost (nothing while the deployment is idle)
 * is asserted in test/properties/query-count/.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deploymentRoute, logLines, postLogs, reportOk } from "../../helpers/engine";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import { createDeployment, createProjectWithStack } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { runCommonRouteTests } from "../../helpers/security";
import { sleep } from "../../helpers/wait";

async function queued() {
  const { owner, environmentId, stack } = await createProjectWithStack();
  const deployment = await createDeployment(environmentId, [stack.id]);
  return { owner, stack, deployment, path: `/v1/deployments/${deployment.id}/wait` };
}

/** The wait's answer, and how long it took (ms). */
async function timed(path: string, key: string) {
  const started = Date.now();
  const res = await request<DeploymentRecord>("GET", path, { key });
  return { res, ms: Date.now() - started };
}

describe("GET /v1/deployments/{id}/wait", () => {
  // The unreachable feed's notification failure below is logged on purpose.
  const errors = captureLogs("error");
  it("answers a final deployment at once", async () => {
    const { owner, deployment, path } = await queued();
    const cancelled = await reportOk(deployment.id, { status: "cancelled" });
    const { res, ms } = await timed(path, owner.key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(cancelled);
    expect(ms).toBeLessThan(1000);
    expect(res.headers.get("etag")).toBeTruthy();
  });

  it("answers as soon as the deployment becomes final, through the changes before it", async () => {
    const { owner, deployment, path } = await queued();
    const waiting = timed(`${path}?timeout=20`, owner.key);
    await sleep(300);
    await reportOk(deployment.id, { status: "in_progress" });
    await postLogs(deployment.id, logLines(3));
    await sleep(300);
    const failed = await reportOk(deployment.id, { status: "failed" });
    const { res, ms } = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(failed);
    expect(ms).toBeLessThan(5000);
  });

  it("answers the deployment as it stands once `timeout` seconds have passed", async () => {
    const { owner, deployment, path } = await queued();
    const waiting = timed(`${path}?timeout=1.5`, owner.key);
    await sleep(200);
    const running = await reportOk(deployment.id, { status: "in_progress" });
    const { res, ms } = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(running);
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(4000);
    // Idle throughout: the record as it was.
    const idle = await timed(`${path}?timeout=1`, owner.key);
    expect(idle.res.body).toEqual(running);
    expect(idle.ms).toBeGreaterThanOrEqual(900);
  });

  it("a change whose notice never reached the feed (lost with its isolate) is in the answer when the time is up", async () => {
    const { owner, deployment, path } = await queued();
    const waiting = timed(`${path}?timeout=1.5`, owner.key);
    await sleep(200);
    const unreachable = {
      idFromName: (name: string) => env.DEPLOYMENT_FEED.idFromName(name),
      get: () => ({ notify: () => Promise.reject(new Error("feed unreachable")) }),
    } as unknown as Env["DEPLOYMENT_FEED"];
    const moved = await request<DeploymentRecord>("PATCH", `/internal/v1/deployments/${deployment.id}`, {
      body: { status: "in_progress" },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      bindings: { DEPLOYMENT_FEED: unreachable },
    });
    expect(moved.status, moved.raw).toBe(200);
    await expect
      .poll(() => errors.lines().filter((l) => l.msg === "deployment feed notification failed"))
      .toContainEqual(expect.objectContaining({ deployment_id: deployment.id }));
    const { res } = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toEqual(moved.body);
  });

  it("many waits at once all see the end", async () => {
    const { owner, deployment, path } = await queued();
    const waits = Array.from({ length: 20 }, () => timed(`${path}?timeout=20`, owner.key));
    await sleep(500);
    const done = await reportOk(deployment.id, { status: "cancelled" });
    for (const { res } of await Promise.all(waits)) expect(res.body).toEqual(done);
  });

  it("`timeout`: seconds from 1 to 60 (default 30); anything else is 400", async () => {
    const { owner, deployment, path } = await queued();
    await reportOk(deployment.id, { status: "cancelled" });
    for (const timeout of ["0", "0.5", "61", "60.5", "-1", "abc", "", "1e1", " 5", "0x10"]) {
      expectError(
        await request("GET", `${path}?timeout=${encodeURIComponent(timeout)}`, { key: owner.key }),
        400,
        "bad_input",
        "timeout",
      );
    }
    for (const timeout of ["1", "60", "2.5"]) {
      expect((await request("GET", `${path}?timeout=${timeout}`, { key: owner.key })).status).toBe(200);
    }
  });

  it("an unknown deployment is 404, a malformed id 400, at once", async () => {
    const { owner } = await queued();
    expectError(
      await request("GET", `/v1/deployments/${UNKNOWN_ID}/wait`, { key: owner.key }),
      404,
      "not_found",
    );
    expectError(await request("GET", "/v1/deployments/nope/wait", { key: owner.key }), 400, "bad_input");
  });

  runCommonRouteTests(
    "GET /v1/deployments/{id}/wait",
    deploymentRoute((_, d) => `/v1/deployments/${d.id}/wait`),
  );
});
