/**
 * What an operator does when a receiver misbehaves (API_CONTRACT §13): send a test delivery, and
 * rotate the signing secret with an overlap window (sending deliveries again is
 * ./redelivery.ts). Every operation needs `contributor` on the project.
 */

import { and, eq, sql } from "drizzle-orm";
import type { CallerContext, ServiceContext } from "../../context";
import { projectNotMoving } from "../../db/moving";
import { notificationIntegrations } from "../../db/schema";
import { newId } from "../../lib/ids";
import { toIso } from "../../lib/time";
import type {
  RotatedSecret,
  RotateSecretInput,
  TestSendInput,
  TestSendResult,
} from "../../schemas/integration-writes";
import { attemptDelivery, DELIVERY_TIMEOUT_MS } from "../../webhooks/deliver";
import { auditEntry, diffRecords } from "../audit/entry";
import { unchangedSince, writeLatest } from "../preconditions";
import { loadIntegration } from "./integrations";
import { newSealedSecret, signingSecretsOf } from "./secrets";

export const DEFAULT_PREVIOUS_SECRET_TTL_SECONDS = 86_400;

/**
 * One signed delivery now, answered directly: not retried, not an event, not a delivery, and
 * without effect on the integration's state (a test never disables it), so it writes no audit
 * entry (API_CONTRACT §14: no entry without its change). A disabled integration can be tested:
 * that is how an operator checks a receiver before re-enabling it.
 */
export async function testIntegration(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  input: TestSendInput,
): Promise<TestSendResult> {
  const type = input.type ?? "deployment.succeeded";
  const { row } = await loadIntegration(ctx.db, ctx.identity, projectId, integrationId, "write");
  const started = Date.now();
  const outcome = await attemptDelivery(
    {
      type: row.type,
      url: row.url,
      signingSecrets: await signingSecretsOf(
        ctx,
        row.id,
        {
          current: row.signingSecret,
          previous: row.previousSigningSecret,
          previousExpiresAt: row.previousSecretExpiresAt,
        },
        started,
      ),
    },
    { id: newId(), type, createdAt: toIso(started), data: { test: true, project_id: projectId } },
    { allowInsecure: ctx.config.allowInsecureWebhooks, timeoutMs: DELIVERY_TIMEOUT_MS },
  );
  return {
    delivered: outcome.ok,
    status_code: outcome.statusCode,
    error: outcome.error,
    duration_ms: Math.round(outcome.durationMs),
  };
}

/**
 * A new signing secret; the current one becomes the previous and keeps signing (a second `v1,`
 * signature) for `expire_previous_in` seconds. A secret rotated out before is dropped at once.
 */
export async function rotateIntegrationSecret(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  input: RotateSecretInput,
): Promise<RotatedSecret> {
  const { db } = ctx;
  const expirePreviousIn = input.expire_previous_in ?? DEFAULT_PREVIOUS_SECRET_TTL_SECONDS;
  const { row } = await loadIntegration(db, ctx.identity, projectId, integrationId, "write");
  const { secret, stored } = await newSealedSecret(ctx, integrationId);
  const i = notificationIntegrations;
  // Applied to the integration as it is when the rotation lands (`writeLatest`): the secret it
  // retires is the one it read (the row is as read, or nothing is written), and the entry's `from` is the update time it replaced.
  return writeLatest(
    db,
    i,
    row,
    async (current) => {
      const nowMs = Date.now();
      const expiresAt = toIso(nowMs + expirePreviousIn * 1000);
      const now = toIso(nowMs);
      // Of the record's non-secret fields only the update time changes (API_CONTRACT §14): the
      // entry's action names the rotation, and no secret is ever in it.
      const [rows] = await db.batch([
        db
          .update(i)
          .set({
            signingSecret: stored,
            previousSigningSecret: sql`${i.signingSecret}`,
            previousSecretExpiresAt: expiresAt,
            updatedAt: now,
          })
          .where(and(eq(i.id, integrationId), unchangedSince(i, current)))
          .returning({ id: i.id }),
        auditEntry(ctx, {
          target: { type: "notification_integration", id: integrationId },
          projectId,
          changes: diffRecords({ updated_at: current.updatedAt }, { updated_at: now }),
        }),
      ]);
      return rows[0] ? { signing_secret: secret, previous_expires_at: expiresAt } : undefined;
    },
    { guard: null, what: "Integration" },
  );
}

/** Forgets previous secrets whose overlap has ended (the cron; signing already ignores them). */
export async function forgetExpiredSecrets(ctx: ServiceContext, nowMs = Date.now()): Promise<number> {
  const i = notificationIntegrations;
  const cleared = await ctx.db
    .update(i)
    .set({ previousSigningSecret: null, previousSecretExpiresAt: null })
    .where(
      and(
        sql`${i.previousSecretExpiresAt} IS NOT NULL`,
        sql`${i.previousSecretExpiresAt} <= ${toIso(nowMs)}`,
        // Not a moving organization's (src/db/moving.ts): its source forgets them, captured.
        projectNotMoving(sql`${i.projectId}`),
      ),
    )
    .returning({ id: i.id })
    .all();
  return cleared.length;
}
