/**
 * Webhook signing secrets at rest. The service needs each secret itself to sign with, so it is
 * kept the way a variable's secret value is (./variables.ts): AES-256-GCM under the key derived
 * from `VARIABLES_KEY`, a fresh IV each time, and the envelope naming its key version, so the
 * same rotation (`VARIABLES_KEY_PREVIOUS`, then the re-encryption sweep) covers both. The
 * additional data binds a secret to its integration and to this purpose (a scope no variable
 * has): copied onto another integration, or into a variable's row, it does not open. The current
 * and the previous secret of an integration share it, so a rotation moves the one to the other
 * as it is stored.
 *
 * A stored value that is not an envelope is a secret written before secrets were sealed (it
 * starts `whsec_`): it is used as it is, and the sweep seals it.
 */
import {
  decryptVariableValue,
  encryptVariableValue,
  VALUE_ENVELOPE_PREFIX,
  type VariableIdentity,
  type VariableKeySecrets,
} from "./variables";

const identityOf = (integrationId: string): VariableIdentity => ({
  id: integrationId,
  environmentId: "",
  scope: "integration_signing_secret",
});

/** Whether a stored signing secret is sealed (else it was stored in clear, before sealing). */
export function isSealedSecret(stored: string): boolean {
  return stored.startsWith(`${VALUE_ENVELOPE_PREFIX}.`);
}

/** The key version a stored secret is sealed under, or null for one stored in clear. */
export function sealedSecretKeyVersion(stored: string): number | null {
  if (!isSealedSecret(stored)) return null;
  const version = Number(stored.split(".")[1]);
  return Number.isSafeInteger(version) ? version : null;
}

/** The envelope to store for `secret`, under the current key. */
export async function sealSigningSecret(
  keys: VariableKeySecrets,
  integrationId: string,
  secret: string,
): Promise<string> {
  return (await encryptVariableValue(keys, identityOf(integrationId), secret)).envelope;
}

/** The secret a stored value holds (one stored in clear is that secret). */
export async function openSigningSecret(
  keys: VariableKeySecrets,
  integrationId: string,
  stored: string,
): Promise<string> {
  if (!isSealedSecret(stored)) return stored;
  return decryptVariableValue(keys, identityOf(integrationId), { envelope: stored, keyVersion: null });
}
