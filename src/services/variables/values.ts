/**
 * Variable values (API_CONTRACT §5): sealing a value for storage, opening and comparing it, and
 * revealing it (the key rotation sweep is ./reencrypt.ts). `secret` and `secure_string` values
 * are AES-GCM envelopes (src/crypto/variables.ts) under VARIABLES_KEY (or, while rotating, VARIABLES_KEY_PREVIOUS);
 * the keys come from the context's config. A crypto failure is `500 internal` with one log
 * line for the operator; the value itself is never logged, returned in an error, or kept in a
 * database error's message.
 */
import type { CallerContext, ServiceContext } from "../../context";
import {
  decryptVariableValue,
  encryptVariableValue,
  VariableDecryptError,
  type VariableIdentity,
  VariableKeyConfigError,
} from "../../crypto/variables";
import { type VariableType, variables } from "../../db/schema";
import { ApiError, loggableError } from "../../errors";
import { grants } from "../../http/scopes";
import type { Logger } from "../../lib/log";
import type { VariableValue } from "../../schemas/variable";
import type { VariableWriteInput } from "../../schemas/variable-writes";
import { loadAuthorized } from "../access";
import { auditEntry } from "../audit/entry";

const INTERNAL_MESSAGE = "Variable values cannot be encrypted or decrypted right now; a retry may succeed.";

/**
 * Crypto failures become `500 internal` with one clear log line for the operator. The value
 * is never in scope here; only the variable's id and the reason are logged.
 */
export function cryptoFailure(log: Logger, err: unknown, operation: string, variableId: string): never {
  if (err instanceof VariableKeyConfigError) {
    log.error("variables key misconfigured", { operation, variable_id: variableId, error: err.message });
    throw new ApiError("internal", INTERNAL_MESSAGE);
  }
  if (err instanceof VariableDecryptError) {
    log.error("variable value does not decrypt", { operation, variable_id: variableId, error: err.message });
    throw new ApiError("internal", INTERNAL_MESSAGE);
  }
  throw err;
}

/**
 * Drizzle's query errors print the bound parameters, and those include the value: keep only
 * the driver's own message before anything can log it.
 */
export function withoutParameters(err: unknown): Error {
  let inner: unknown = err;
  for (let depth = 0; inner instanceof Error && inner.cause !== undefined && depth < 5; depth++) {
    inner = inner.cause;
  }
  return new Error(`variables write failed: ${inner instanceof Error ? inner.message : "unknown error"}`);
}

/** What to store for a value: plaintext for `string`, else an envelope under the current key. */
export async function storedValue(
  ctx: ServiceContext,
  identity: VariableIdentity,
  input: VariableWriteInput,
  operation: string,
): Promise<{ value: string; keyVersion: number | null }> {
  if (input.type === "string") return { value: input.value, keyVersion: null };
  try {
    const sealed = await encryptVariableValue(ctx.config.variableKeys, identity, input.value);
    return { value: sealed.envelope, keyVersion: sealed.keyVersion };
  } catch (err) {
    return cryptoFailure(ctx.log, err, operation, identity.id);
  }
}

/** A value as a variable row (or a version's value row) stores it. */
export type StoredValue = { type: VariableType; value: string; keyVersion: number | null };

/** The plaintext of a stored value; a value that cannot be opened is `500 internal` (logged). */
export async function openValue(
  ctx: ServiceContext,
  identity: VariableIdentity,
  stored: StoredValue,
  operation: string,
): Promise<string> {
  if (stored.type === "string") return stored.value;
  try {
    return await decryptVariableValue(ctx.config.variableKeys, identity, {
      envelope: stored.value,
      keyVersion: stored.keyVersion,
    });
  } catch (err) {
    return cryptoFailure(ctx.log, err, operation, identity.id);
  }
}

/**
 * Whether a stored value holds `plaintext`. A value that cannot be opened (its key is no longer
 * configured) counts as different, so a write that replaces it goes ahead as it always did.
 */
export async function holdsValue(
  ctx: ServiceContext,
  identity: VariableIdentity,
  stored: StoredValue,
  plaintext: string,
): Promise<boolean> {
  if (stored.type === "string") return stored.value === plaintext;
  try {
    const current = await decryptVariableValue(ctx.config.variableKeys, identity, {
      envelope: stored.value,
      keyVersion: stored.keyVersion,
    });
    return current === plaintext;
  } catch (err) {
    ctx.log.warn("variable value does not decrypt; compared as changed", {
      variable_id: identity.id,
      error: loggableError(err),
    });
    return false;
  }
}

/**
 * Whether a write by the caller counts the value it gives for a name as changed without comparing
 * it (API_CONTRACT §28, "no guessing a secret by writing it"): a key without `variables:reveal`
 * must learn nothing of a `secret` or `secure_string` value, and `unchanged` (or no new version)
 * for a right guess, `updated` for a wrong one, would tell it whether the value it gave is the
 * one stored. So for such a key a name whose type is sealed before or after the write is always
 * `updated` with `value_changed: true`, and nothing is opened to compare. Callers without an
 * identity (the operator's internal API) and keys that may reveal the value compare as before.
 */
export function countsAsChanged(ctx: ServiceContext, from: VariableType, to: VariableType): boolean {
  const { identity } = ctx;
  if (!identity || grants(identity.scopes, "variables:reveal")) return false;
  return from !== "string" || to !== "string";
}

/** The decrypted current value. Needs `contributor`: reading a value is as sensitive as writing it. */
export async function revealVariable(ctx: CallerContext, variableId: string): Promise<VariableValue> {
  const { db, identity } = ctx;
  const { row } = await loadAuthorized(db, identity, variables, variableId, "write", "Variable");
  // Recorded before the value leaves: a reveal that cannot be recorded does not happen.
  await auditEntry(ctx, {
    target: { type: "variable", id: row.id },
    projectId: row.projectId,
    when: "always",
  }).run();
  return {
    value: await openValue(
      ctx,
      { id: row.id, environmentId: row.environmentId, scope: row.scope },
      row,
      "reveal",
    ),
  };
}
