/**
 * Notification integrations (API_CONTRACT §3 "Notification integration", §5) and their
 * delivery log. The signing secret leaves this module only in the create result.
 */

import { and, eq, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { CallerContext, Identity, ServiceContext } from "../context";
import type { Db } from "../db/client";
import { keyset, listPage, type Page, type PageRequest, toPage } from "../db/pagination";
import {
  deliveryAttempts,
  events,
  type IntegrationType,
  notificationIntegrations,
  webhookDeliveries,
} from "../db/schema";
import { badInput, notFound } from "../http/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { NOTIFICATION_FLAGS, type NotificationConfiguration } from "../schemas/event-types";
import type {
  CreatedIntegration,
  DeliveryAttemptRecord,
  DeliveryRecord,
  IntegrationRecord,
} from "../schemas/integration";
import { newSigningSecret } from "../webhooks/signing";
import { checkWebhookUrl } from "../webhooks/url-guard";
import { loadProject, loadScoped } from "./access";
import { auditEntry, diffRecords } from "./audit";
import { checkIfMatch, explainMiss, unchangedSince } from "./preconditions";

export type IntegrationCreateInput = {
  type: IntegrationType;
  url: string;
  configuration?: Partial<NotificationConfiguration> | undefined;
};

export type IntegrationUpdateInput = {
  url?: string | undefined;
  configuration?: Partial<NotificationConfiguration> | undefined;
};

/** Whether http:// and private hosts are allowed (ALLOW_INSECURE_WEBHOOKS, local only). */
export type UrlPolicy = { allowInsecure: boolean };

type IntegrationRow = typeof notificationIntegrations.$inferSelect;

export function toIntegrationRecord(row: IntegrationRow): IntegrationRecord {
  return {
    id: row.id,
    project_id: row.projectId,
    type: row.type,
    url: row.url,
    configuration: fullConfiguration(row.configuration),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Every flag present: a flag left out is `false`. */
export function fullConfiguration(given: Partial<NotificationConfiguration> = {}): NotificationConfiguration {
  const out = {} as NotificationConfiguration;
  for (const flag of NOTIFICATION_FLAGS) out[flag] = given[flag] === true;
  return out;
}

/** The URL as it is stored: parsed and normalized (`new URL(u).href`, API_CONTRACT §17). */
function allowedUrl(url: string, policy: UrlPolicy): string {
  const check = checkWebhookUrl(url, policy);
  if (!check.ok) throw badInput("The webhook URL is not allowed.", [{ path: "url", message: check.reason }]);
  return check.url.href;
}

/** The public create (contributor or above) — `type` is limited to `webhook` by the route schema. */
export async function createIntegration(
  ctx: CallerContext,
  projectId: string,
  input: IntegrationCreateInput,
): Promise<CreatedIntegration> {
  const { db, identity } = ctx;
  const url = allowedUrl(input.url, { allowInsecure: ctx.config.allowInsecureWebhooks });
  await loadProject(db, identity, projectId, "write");
  return insertIntegration(ctx, projectId, { ...input, url });
}

/** The internal create (any type). An unknown project is `not_found`. */
export async function createIntegrationInternal(
  ctx: ServiceContext,
  projectId: string,
  input: IntegrationCreateInput,
): Promise<CreatedIntegration> {
  // A project that does not exist (or vanished meanwhile): the error boundary answers 404.
  const url = allowedUrl(input.url, { allowInsecure: ctx.config.allowInsecureWebhooks });
  return insertIntegration(ctx, projectId, { ...input, url });
}

/** What an audit entry may say of an integration: never its secret, nor a Slack URL (the URL is the credential). */
function auditable(record: IntegrationRecord): Record<string, unknown> {
  if (record.type !== "slack") return record;
  const { url: _credential, ...rest } = record;
  return rest;
}

async function insertIntegration(
  ctx: ServiceContext,
  projectId: string,
  input: IntegrationCreateInput,
): Promise<CreatedIntegration> {
  const { db } = ctx;
  const now = nowIso();
  const row: IntegrationRow = {
    id: newId(),
    projectId,
    type: input.type,
    url: input.url,
    configuration: fullConfiguration(input.configuration),
    signingSecret: newSigningSecret(),
    createdAt: now,
    updatedAt: now,
  };
  const record = toIntegrationRecord(row);
  await db.batch([
    db.insert(notificationIntegrations).values(row),
    auditEntry(ctx, {
      target: { type: "notification_integration", id: row.id },
      projectId,
      changes: diffRecords(null, auditable(record)),
    }),
  ]);
  return { ...record, signing_secret: row.signingSecret };
}

/**
 * The project's integrations, with the shared pagination (API_CONTRACT §4: every list takes
 * `after`, `limit`, `sort_by`). A project has few integrations, so in practice this is one page
 * with `has_more: false`, the shape §3 shows.
 */
export async function listIntegrations(
  ctx: CallerContext,
  projectId: string,
  page: PageRequest,
): Promise<Page<IntegrationRecord>> {
  const { db, identity } = ctx;
  await loadProject(db, identity, projectId, "read");
  return listPage(
    db,
    notificationIntegrations,
    eq(notificationIntegrations.projectId, projectId),
    page,
    toIntegrationRecord,
  );
}

function loadIntegration(
  db: Db,
  identity: Identity,
  projectId: string,
  integrationId: string,
  action: "read" | "write",
) {
  return loadScoped(
    db,
    identity,
    notificationIntegrations,
    integrationId,
    action,
    "Integration",
    eq(notificationIntegrations.projectId, projectId),
  );
}

export async function getIntegration(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
): Promise<IntegrationRecord> {
  const { db, identity } = ctx;
  const { row } = await loadIntegration(db, identity, projectId, integrationId, "read");
  return toIntegrationRecord(row);
}

/**
 * Merges the given flags into the stored configuration and optionally replaces the URL.
 * The merge is done by SQLite (`json_patch`) in the UPDATE itself, so two concurrent
 * updates of different flags both take effect.
 */
export async function updateIntegration(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  input: IntegrationUpdateInput,
): Promise<IntegrationRecord> {
  const { db, identity } = ctx;
  const policy = { allowInsecure: ctx.config.allowInsecureWebhooks };
  const flags = input.configuration ?? {};
  if (input.url === undefined && Object.keys(flags).length === 0) {
    throw badInput("Nothing to change: give `url` or at least one `configuration` flag.", [
      { path: "configuration", message: "Give at least one flag, or `url`." },
    ]);
  }
  const url = input.url === undefined ? undefined : allowedUrl(input.url, policy);
  const { row: stored } = await loadIntegration(db, identity, projectId, integrationId, "write");
  const guard = (await checkIfMatch(ctx, toIntegrationRecord(stored)))
    ? unchangedSince(notificationIntegrations, stored)
    : undefined;
  const set: SQLiteUpdateSetSource<typeof notificationIntegrations> = { updatedAt: nowIso() };
  if (url !== undefined) set.url = url;
  if (Object.keys(flags).length > 0) {
    set.configuration = sql`json_patch(${notificationIntegrations.configuration}, ${JSON.stringify(flags)})`;
  }
  const before = toIntegrationRecord(stored);
  const after: IntegrationRecord = {
    ...before,
    url: url ?? before.url,
    configuration: { ...before.configuration, ...flags },
    updated_at: set.updatedAt as string,
  };
  const [rows] = await db.batch([
    db
      .update(notificationIntegrations)
      .set(set)
      .where(and(eq(notificationIntegrations.id, integrationId), guard))
      .returning(),
    auditEntry(ctx, {
      target: { type: "notification_integration", id: integrationId },
      projectId,
      changes: diffRecords(auditable(before), auditable(after)),
    }),
  ]);
  const row = rows[0];
  if (!row) {
    if (guard) await explainMiss(db, notificationIntegrations, stored, "Integration");
    // Deleted (with its project) between the check and the write.
    throw notFound("Integration");
  }
  return toIntegrationRecord(row);
}

/** A page of the integration's deliveries, each with its attempts: two queries whatever the page size. */
export async function listDeliveries(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  page: PageRequest,
): Promise<Page<DeliveryRecord>> {
  const { db, identity } = ctx;
  await loadIntegration(db, identity, projectId, integrationId, "read");
  const { where, orderBy } = keyset(
    { createdAt: webhookDeliveries.createdAt, id: webhookDeliveries.id },
    page,
  );
  const rows = await db
    .select({ delivery: webhookDeliveries, eventType: events.type })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(and(eq(webhookDeliveries.integrationId, integrationId), where))
    .orderBy(...orderBy)
    .limit(page.limit + 1)
    .all();
  const ids = rows.slice(0, page.limit).map((r) => r.delivery.id);
  const attempts =
    ids.length === 0
      ? []
      : await db
          .select()
          .from(deliveryAttempts)
          // One JSON parameter instead of one per id: a page (up to 240) would pass D1's 100-parameter limit.
          .where(sql`${deliveryAttempts.deliveryId} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`)
          .orderBy(deliveryAttempts.deliveryId, deliveryAttempts.attempt)
          .all();
  const byDelivery = new Map<string, DeliveryAttemptRecord[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId) ?? [];
    list.push({
      attempt: a.attempt,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      next_attempt_at: a.nextAttemptAt,
      created_at: a.createdAt,
    });
    byDelivery.set(a.deliveryId, list);
  }
  return toPage(
    rows,
    page,
    (r) => ({ createdAt: r.delivery.createdAt, id: r.delivery.id }),
    ({ delivery: d, eventType }) => ({
      id: d.id,
      integration_id: d.integrationId,
      event_id: d.eventId,
      event_type: eventType,
      status: d.status,
      attempts: d.attempts,
      last_status_code: d.lastStatusCode,
      last_error: d.lastError,
      next_attempt_at: d.nextAttemptAt,
      attempt_log: byDelivery.get(d.id) ?? [],
      created_at: d.createdAt,
      updated_at: d.updatedAt,
    }),
  );
}
