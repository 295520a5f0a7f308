/**
 * An integration's signing secrets as D1 keeps them: sealed under `VARIABLES_KEY`
 * (src/crypto/signing-secrets.ts). A new or rotated secret is sealed before it is written, and
 * opened only to sign; the re-encryption sweep moves the sealed ones onto the current key and
 * seals any still stored in clear.
 */
import { and, asc, eq, isNotNull, like, notLike, or, type SQL, sql } from "drizzle-orm";
import type { ServiceContext } from "../../context";
import {
  isSealedSecret,
  openSigningSecret,
  sealedSecretKeyVersion,
  sealSigningSecret,
} from "../../crypto/signing-secrets";
import { VariableDecryptError, VariableKeyConfigError } from "../../crypto/variables";
import { notFenced, projectOrg } from "../../db/moving";
import { notificationIntegrations as i } from "../../db/schema";
import { ApiError } from "../../errors";
import { activeSecrets, newSigningSecret } from "../../webhooks/signing";

const FAILURE_MESSAGE = "The signing secret cannot be read; an operator has been alerted.";

/** Crypto failures: one log line for the operator (never the secret), then `500 internal`. */
function secretFailure(ctx: ServiceContext, err: unknown, integrationId: string): never {
  if (err instanceof VariableKeyConfigError || err instanceof VariableDecryptError) {
    ctx.log.error("signing secret does not open or seal", {
      integration_id: integrationId,
      error: err.message,
    });
    throw new ApiError("internal", FAILURE_MESSAGE);
  }
  throw err;
}

/** A new secret, and what to store for it. */
export async function newSealedSecret(
  ctx: ServiceContext,
  integrationId: string,
): Promise<{ secret: string; stored: string }> {
  const secret = newSigningSecret();
  try {
    return { secret, stored: await sealSigningSecret(ctx.config.variableKeys, integrationId, secret) };
  } catch (err) {
    return secretFailure(ctx, err, integrationId);
  }
}

/** The secrets the integration signs with at `nowMs` (the previous one while its overlap lasts), opened. */
export async function signingSecretsOf(
  ctx: ServiceContext,
  integrationId: string,
  stored: { current: string; previous: string | null; previousExpiresAt: string | null },
  nowMs: number,
): Promise<string[]> {
  const active = activeSecrets(stored.current, stored.previous, stored.previousExpiresAt, nowMs);
  try {
    return await Promise.all(
      active.map((secret) => openSigningSecret(ctx.config.variableKeys, integrationId, secret)),
    );
  } catch (err) {
    return secretFailure(ctx, err, integrationId);
  }
}

/**
 * The integrations the sweep seals again: a secret under `previous` (a key version, or null when no
 * rotation is under way) or in clear.
 */
export function staleSigningSecrets(previous: number | null): SQL {
  const stale = (column: typeof i.signingSecret | typeof i.previousSigningSecret): SQL => {
    const inClear = notLike(column, "v1.%");
    return previous === null ? inClear : (or(inClear, like(column, `v1.${previous}.%`)) as SQL);
  };
  return or(
    stale(i.signingSecret),
    and(isNotNull(i.previousSigningSecret), stale(i.previousSigningSecret)),
  ) as SQL;
}

/**
 * The sweep's share (src/services/variables/reencrypt.ts): up to `limit` integrations whose
 * secrets are stale (`staleSigningSecrets`), none of an organization fenced here (those wait:
 * reencrypt.ts `fencedLeft`), as one update each that seals them under the current key and
 * applies only while they are still what was read. Returns the updates, their integrations' ids,
 * and whether more remain.
 */
export async function resealSigningSecrets(ctx: ServiceContext, previous: number | null, limit: number) {
  const keys = ctx.config.variableKeys;
  const rows = await ctx.db
    .select({ id: i.id, current: i.signingSecret, previous: i.previousSigningSecret })
    .from(i)
    .where(and(staleSigningSecrets(previous), notFenced(projectOrg(sql`${i.projectId}`))))
    .orderBy(asc(i.id))
    .limit(limit + 1)
    .all();
  const moving = rows.slice(0, limit);
  const needs = (stored: string) => !isSealedSecret(stored) || sealedSecretKeyVersion(stored) === previous;
  const reseal = async (id: string, stored: string) => {
    if (!needs(stored)) return stored;
    try {
      return await sealSigningSecret(keys, id, await openSigningSecret(keys, id, stored));
    } catch (err) {
      return secretFailure(ctx, err, id);
    }
  };
  const updates = [];
  for (const row of moving) {
    const current = await reseal(row.id, row.current);
    const previousSecret = row.previous === null ? null : await reseal(row.id, row.previous);
    updates.push(
      ctx.db
        .update(i)
        .set({ signingSecret: current, previousSigningSecret: previousSecret })
        .where(
          and(
            eq(i.id, row.id),
            eq(i.signingSecret, row.current),
            row.previous === null
              ? sql`${i.previousSigningSecret} IS NULL`
              : eq(i.previousSigningSecret, row.previous),
          ),
        ),
    );
  }
  return { updates, ids: moving.map((row) => row.id), remaining: rows.length > limit };
}
