/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * Slack URLs are credentials: redacted in every public answer (getIntegration, listIntegrations,
 * updateIntegration).
 */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { type Integration, one, setupIntegration } from "../../helpers/integrations";
import { allowTheLocalReceiver, integrate, integrationRow } from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

describe("Slack URLs are credentials", () => {
  it("every public answer redacts a slack URL; the internal create shows it; a public PATCH of it is 400", async () => {
    const { owner, project } = await setupIntegration();
    const full = "https://hooks.slack.com/services/T000/B000/abcdefghx7Qz";
    const created = await integrate(project.id, full, { changelog: true }, "slack");
    expect(created.url).toBe(full);
    const redacted = "https://hooks.slack.com/…x7Qz";
    const path = one(project.id, created.id);
    const got = await request<Integration>("GET", path, { key: owner.key });
    expect(got.body.url).toBe(redacted);
    const list = await request<{ data: Integration[] }>(
      "GET",
      `/v1/projects/${project.id}/notification-integrations`,
      { key: owner.key },
    );
    expect(list.body.data.find((i) => i.id === created.id)?.url).toBe(redacted);
    expect(list.raw).not.toContain("abcdefgh");
    const patched = await request<Integration>("PATCH", path, {
      key: owner.key,
      body: { configuration: { services_ok: true } },
    });
    expect(patched.body.url).toBe(redacted);
    const refused = await request<ErrorBody>("PATCH", path, {
      key: owner.key,
      body: { url: "https://hooks.slack.com/services/T000/B000/other" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.cause).toEqual([expect.objectContaining({ path: "url" })]);
    expect((await integrationRow(created.id))?.url).toBe(full);
  });
});
