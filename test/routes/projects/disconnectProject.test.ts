/** disconnectProject. */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { runCron, SWEEP_CRON } from "../../helpers/cron";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import type { ProjectBody } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";
import { eventually } from "../../helpers/webhooks";

describe("PATCH /v1/projects/{id}/disconnect", () => {
  it("connected → disconnecting (204), then 409 while not connected", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    const after = await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    expect(["disconnecting", "disconnected"]).toContain(after.body.connection_status);
    const again = await request<ErrorBody>("PATCH", `/v1/projects/${project.id}/disconnect`, {
      key: owner.key,
    });
    expect([again.status, again.body.code]).toEqual([409, "conflict"]);
  });

  describe("a message that never reaches the queue", () => {
    const errors = captureLogs("error");
    captureLogs("warn");

    it("204 all the same (the change is in), a retry replays it, and the cron's sweep sends it again", async () => {
      const { owner, project } = await createOwnedProject();
      const queueDown = {
        send: () => Promise.reject(new Error("queue unavailable")),
        sendBatch: () => Promise.reject(new Error("queue unavailable")),
      } as unknown as Queue;
      const path = `/v1/projects/${project.id}/disconnect`;
      const headers = { "idempotency-key": unique("key") };
      const res = await request("PATCH", path, { key: owner.key, headers, bindings: { EVENTS: queueDown } });
      expect(res.status, res.raw).toBe(204);
      expect(errors.lines()).toContainEqual(
        expect.objectContaining({
          msg: "project.disconnect not queued; left to the sweep",
          project_id: project.id,
        }),
      );
      const retry = await request("PATCH", path, { key: owner.key, headers });
      expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([204, "true"]);
      const status = async () =>
        (await request<ProjectBody>("GET", `/v1/projects/${project.id}`, { key: owner.key })).body
          .connection_status;
      expect(await status()).toBe("disconnecting");

      // A minute on, nothing has finished it: the cron sends its message again.
      await env.DB.prepare("UPDATE projects SET updated_at = ? WHERE id = ?")
        .bind(new Date(Date.now() - 2 * 60_000).toISOString(), project.id)
        .run();
      // While the queue is still down, the sweep's failure holds up no other sweep: the run ends.
      await runCron(SWEEP_CRON, {
        ...env,
        EVENTS: queueDown,
      });
      expect(errors.lines()).toContainEqual(
        expect.objectContaining({ msg: "disconnect sweep failed; the next run tries again" }),
      );
      expect(await status()).toBe("disconnecting");
      await runCron();
      await eventually(async () => expect(await status()).toBe("disconnected"));
    });
  });

  runCommonRouteTests("PATCH /v1/projects/{id}/disconnect", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "PATCH", path: `/v1/projects/${project.id}/disconnect`, caller: owner };
  });
});
