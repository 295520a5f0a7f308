/**
 * The webhook operations of API_CONTRACT §13 in the Workers runtime: real D1, the real EVENTS
 * queue delivering by itself, real HTTP to the local receiver (test/global-setup-receiver.ts).
 * POST …/{integration_id}/rotate-secret (signatures verified with the standardwebhooks package).
 */
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { notificationIntegrations } from "../../../src/db/schema";
import { request } from "../../helpers/api";
import { runCron } from "../../helpers/cron";
import type { ErrorBody } from "../../helpers/expect";
import { emit, setupIntegration } from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import {
  allowTheLocalReceiver,
  db,
  eventually,
  integrationRow,
  openedSecret,
  received,
} from "../../helpers/webhooks";

// The receiver is http://127.0.0.1, as in local development (API_CONTRACT §1).
allowTheLocalReceiver();

describe("POST …/rotate-secret", () => {
  it("signs with both secrets while the previous lives, then with the new one only; the cron forgets it", async () => {
    const { owner, project, integration, bucket, path } = await setupIntegration();
    const res = await request<{ signing_secret: string; previous_expires_at: string }>(
      "POST",
      `${path}/rotate-secret`,
      { key: owner.key, body: { expire_previous_in: 3600 } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Math.abs(Date.parse(res.body.previous_expires_at) - Date.now() - 3600_000)).toBeLessThan(10_000);
    const fresh = new Webhook(res.body.signing_secret);
    const old = new Webhook(integration.signing_secret);

    const first = await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    const [during] = await received(bucket);
    expect(during?.headers["webhook-id"]).toBe(first.id);
    expect(during?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+ v1,[A-Za-z0-9+/=]+$/);
    expect(fresh.verify(during?.body ?? "", during?.headers ?? {})).toBeTruthy();
    expect(old.verify(during?.body ?? "", during?.headers ?? {})).toBeTruthy();

    // The overlap ends.
    const past = new Date(Date.now() - 1000).toISOString();
    await db
      .update(notificationIntegrations)
      .set({ previousSecretExpiresAt: past })
      .where(eq(notificationIntegrations.id, integration.id))
      .run();
    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(2));
    const after = (await received(bucket))[1];
    expect(after?.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(fresh.verify(after?.body ?? "", after?.headers ?? {})).toBeTruthy();
    expect(() => old.verify(after?.body ?? "", after?.headers ?? {})).toThrow();

    // Kept sealed: the previous secret is the old one, stored as it was.
    const rotated = await integrationRow(integration.id);
    expect(rotated?.previousSigningSecret).not.toContain(integration.signing_secret);
    expect(await openedSecret(integration.id, rotated?.previousSigningSecret ?? "")).toBe(
      integration.signing_secret,
    );
    expect(await openedSecret(integration.id, rotated?.signingSecret ?? "")).toBe(res.body.signing_secret);
    await runCron();
    expect(await integrationRow(integration.id)).toMatchObject({
      previousSigningSecret: null,
      previousSecretExpiresAt: null,
    });
  });

  it("defaults to 86400 s, and expire_previous_in 0 stops the previous secret at once", async () => {
    const { owner, bucket, path, integration } = await setupIntegration();
    // No body, and an empty one (as `content-length: 0` or a client that labels every request JSON).
    for (const options of [
      {},
      { rawBody: new Uint8Array(0), headers: { "content-type": "application/json" } },
    ]) {
      const def = await request<{ previous_expires_at: string }>("POST", `${path}/rotate-secret`, {
        key: owner.key,
        ...options,
      });
      expect(def.status, def.raw).toBe(200);
      expect(Math.abs(Date.parse(def.body.previous_expires_at) - Date.now() - 86_400_000)).toBeLessThan(
        10_000,
      );
    }
    const now = await request<{ signing_secret: string }>("POST", `${path}/rotate-secret`, {
      key: owner.key,
      body: { expire_previous_in: 0 },
    });
    await request("POST", `${path}/test`, { key: owner.key });
    const [req] = await received(bucket);
    expect(req?.headers["webhook-signature"]).not.toContain(" ");
    expect(new Webhook(now.body.signing_secret).verify(req?.body ?? "", req?.headers ?? {})).toBeTruthy();
    expect(() =>
      new Webhook(integration.signing_secret).verify(req?.body ?? "", req?.headers ?? {}),
    ).toThrow();
  });

  it("takes any number of seconds in 0–604800, fractions to the millisecond", async () => {
    const { owner, path } = await setupIntegration();
    const before = Date.now();
    const res = await request<{ previous_expires_at: string }>("POST", `${path}/rotate-secret`, {
      key: owner.key,
      body: { expire_previous_in: 90.25 },
    });
    expect(res.status, res.raw).toBe(200);
    const ttl = Date.parse(res.body.previous_expires_at) - before;
    expect(ttl).toBeGreaterThanOrEqual(90_250);
    expect(ttl).toBeLessThan(100_000);
  });

  it("refuses expire_previous_in outside 0–604800 or not a number", async () => {
    const { owner, path, integration } = await setupIntegration();
    for (const value of [-1, 604_801, -0.5, 604_800.5, "60", "null"]) {
      const res = await request<ErrorBody>("POST", `${path}/rotate-secret`, {
        key: owner.key,
        body: { expire_previous_in: value },
      });
      expect(res.status, String(value)).toBe(400);
    }
    const kept = (await integrationRow(integration.id))?.signingSecret ?? "";
    expect(await openedSecret(integration.id, kept)).toBe(integration.signing_secret);
  });

  runCommonRouteTests("POST rotate-secret", async () => {
    const { owner, path } = await setupIntegration();
    return { method: "POST", path: `${path}/rotate-secret`, body: {}, caller: owner };
  });
});
