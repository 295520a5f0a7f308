/** End to end: events reach the receiver through the real queue, signed. */
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { internalOk, request } from "../../helpers/api";
import { createOwnedProject, createStack, unique } from "../../helpers/factories";
import { allowTheLocalReceiver, eventually, hook, integrate, received } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("end to end", () => {
  it("an internal event reaches the receiver through the queue, signed, and shows in the deliveries log", async () => {
    const { owner, project } = await createOwnedProject();
    const bucket = unique("e2e");
    const integration = await integrate(project.id, hook(bucket), { promotions: true });
    const accepted = await internalOk<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "promotion.created",
      data: { summary: "staging → production" },
    });

    await eventually(async () => {
      const [req] = await received(bucket);
      expect(req?.headers["webhook-id"]).toBe(accepted.id);
      expect(
        new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
      ).toMatchObject({
        type: "promotion.created",
        data: { summary: "staging → production", project_id: project.id },
      });
    });
    await eventually(async () => {
      const log = await request<{ data: Array<Record<string, unknown>>; has_more: boolean }>(
        "GET",
        `/v1/projects/${project.id}/notification-integrations/${integration.id}/deliveries`,
        { key: owner.key },
      );
      expect(log.status).toBe(200);
      expect(log.body.has_more).toBe(false);
      expect(log.body.data).toEqual([
        expect.objectContaining({
          integration_id: integration.id,
          event_id: accepted.id,
          event_type: "promotion.created",
          status: "succeeded",
          attempts: 1,
          last_status_code: 200,
          attempt_log: [expect.objectContaining({ attempt: 1, status_code: 200, error: null })],
        }),
      ]);
    });
  });

  it("deployment transitions reach the receiver, each signed, with the deployment record", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("deploy");
    const integration = await integrate(project.id, hook(bucket), {
      deployments_in_progress: true,
      deployments_succeeded: true,
    });
    const stack = await createStack(project.default_environment_id);
    const deployment = await internalOk<{ id: string }>(
      "POST",
      `/environments/${project.default_environment_id}/deployments`,
      { stack_ids: [stack.id], data: { patch: [] } },
    );
    await internalOk("PATCH", `/deployments/${deployment.id}`, { status: "in_progress" });
    await internalOk("PATCH", `/deployments/${deployment.id}`, { status: "succeeded" });

    await eventually(async () => {
      const requests = await received(bucket);
      expect(requests).toHaveLength(2);
      const payloads = requests.map(
        (r) => new Webhook(integration.signing_secret).verify(r.body, r.headers) as Record<string, unknown>,
      );
      expect(payloads.map((p) => p.type).sort()).toEqual(["deployment.in_progress", "deployment.succeeded"]);
      for (const payload of payloads) {
        expect(payload.data).toMatchObject({ project_id: project.id, deployment: { id: deployment.id } });
      }
      expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(2);
    });
  });
});
