/**
 * Signing secrets at rest (src/crypto/signing-secrets.ts): D1 keeps each integration's secret
 * sealed under VARIABLES_KEY, bound to its integration; deliveries and test sends open it to sign;
 * the re-encryption sweep (internalReencryptVariables) moves secrets onto a new key and seals any
 * stored in clear. Through the real Worker, D1, queue and the local receiver; every signature is
 * checked with the standardwebhooks package.
 */
import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import { sealSigningSecret } from "../../../src/crypto/signing-secrets";
import { variableKeyVersion } from "../../../src/crypto/variables";
import { notificationIntegrations } from "../../../src/db/schema";
import { reencryptVariables } from "../../../src/services/variables/reencrypt";
import { request } from "../../helpers/api";
import { serviceContext } from "../../helpers/context";
import { emit, setupIntegration } from "../../helpers/integrations";
import { randomKey } from "../../helpers/variables";
import {
  allowTheLocalReceiver,
  db,
  eventually,
  integrationRow,
  openedSecret,
  received,
} from "../../helpers/webhooks";

allowTheLocalReceiver();

const storedSecret = async (id: string) => (await integrationRow(id))?.signingSecret ?? "";
const setStoredSecret = (id: string, value: string) =>
  db
    .update(notificationIntegrations)
    .set({ signingSecret: value })
    .where(eq(notificationIntegrations.id, id))
    .run();
const sweep = (overrides: Parameters<typeof serviceContext>[0] = {}) =>
  reencryptVariables(serviceContext(overrides, "internal.reencryptVariables"), 500);

describe("signing secrets at rest", () => {
  it("are stored sealed, never in clear, and deliveries sign with the secret the create showed", async () => {
    const { project, integration, bucket } = await setupIntegration();
    const secret = integration.signing_secret as string;
    const stored = await storedSecret(integration.id);
    expect(stored).toMatch(/^v1\.\d+\./);
    expect(stored).not.toContain(secret.slice("whsec_".length));
    expect(await openedSecret(integration.id, stored)).toBe(secret);

    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    const [got] = await received(bucket);
    expect(new Webhook(secret).verify(got?.body ?? "", got?.headers ?? {})).toBeTruthy();
  });

  it("one stored in clear (before sealing) still signs, and the sweep seals it with no rotation", async () => {
    const { project, integration, bucket } = await setupIntegration();
    const secret = integration.signing_secret as string;
    await setStoredSecret(integration.id, secret);
    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    const [before] = await received(bucket);
    expect(new Webhook(secret).verify(before?.body ?? "", before?.headers ?? {})).toBeTruthy();

    const step = await sweep();
    expect(step.previous_key_version).toBeNull();
    expect(step.reencrypted).toBeGreaterThanOrEqual(1);
    const sealed = await storedSecret(integration.id);
    expect(sealed).toMatch(/^v1\./);
    expect(await openedSecret(integration.id, sealed)).toBe(secret);
    // Sealed now, it is left alone by the next sweep.
    await sweep();
    expect(await storedSecret(integration.id)).toBe(sealed);

    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(2));
    const after = (await received(bucket))[1];
    expect(new Webhook(secret).verify(after?.body ?? "", after?.headers ?? {})).toBeTruthy();
  });

  it("a VARIABLES_KEY rotation moves them onto the new key, which alone then signs", async () => {
    const { project, integration, bucket } = await setupIntegration();
    const secret = integration.signing_secret as string;
    // Sealed under a key that is now the previous one (only this row is: the key is new), while
    // the test's VARIABLES_KEY is the current one. A sweep under the test's own key as the
    // previous one would move every other test's rows too.
    const oldKey = randomKey();
    await setStoredSecret(
      integration.id,
      await sealSigningSecret({ current: oldKey }, integration.id, secret),
    );
    const rotation = { VARIABLES_KEY_PREVIOUS: oldKey };
    let step = await sweep(rotation);
    while (step.remaining) step = await sweep(rotation);
    expect(step.previous_key_version).toBe(await variableKeyVersion(oldKey));
    const stored = await storedSecret(integration.id);
    expect(stored.startsWith(`v1.${await variableKeyVersion(env.VARIABLES_KEY)}.`)).toBe(true);

    // The previous key is dropped (the Worker's env never had it): deliveries open and sign.
    await emit(project.id);
    await eventually(async () => expect(await received(bucket)).toHaveLength(1));
    const [got] = await received(bucket);
    expect(new Webhook(secret).verify(got?.body ?? "", got?.headers ?? {})).toBeTruthy();
  });

  it("a sealed secret copied onto another integration does not open there: 500, logged, nothing sent", async () => {
    const one = await setupIntegration();
    const other = await setupIntegration();
    await setStoredSecret(other.integration.id, await storedSecret(one.integration.id));
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const sent = await request("POST", `${other.path}/test`, { key: other.owner.key, body: {} });
      expect(sent.status).toBe(500);
      expect(errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")).toContain(
        "signing secret does not open",
      );
    } finally {
      errors.mockRestore();
    }
    expect(await received(other.bucket)).toHaveLength(0);
  });
});
