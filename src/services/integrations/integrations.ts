/**
 * Notification integrations (API_CONTRACT §3 "Notification integration", §5, §13). The signing
 * secret leaves this module only in the create result; a Slack URL only through the internal API.
 * Their deliveries are read by ./deliveries.ts and attempted by ./attempts.ts; the operators'
 * operations are ./operator.ts and ./redelivery.ts.
 */

import { and, eq, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { CallerContext, Identity, ServiceContext } from "../../context";
import type { Db } from "../../db/client";
import { insertRow } from "../../db/compiled-inserts";
import { NOTIFICATION_FLAGS, type NotificationConfiguration } from "../../db/event-types";
import { type Page, type PageRequest, tablePage } from "../../db/pagination";
import { notificationIntegrations } from "../../db/schema";
import { badInput } from "../../errors";
import { recordEtag } from "../../http/etag";
import { newId } from "../../lib/ids";
import { nowIso } from "../../lib/time";
import type { CreatedIntegration, IntegrationRecord } from "../../schemas/integration";
import type {
  ConfigurationInput,
  IntegrationCreateInput,
  IntegrationUpdateInput,
  InternalIntegrationCreateInput,
} from "../../schemas/integration-writes";
import { checkWebhookUrl } from "../../webhooks/url-guard";
import { authorizedLookup, loadProject, projectLookup } from "../access";
import { auditEntry, diffRecords } from "../audit/entry";
import { guardedPage, runLookup } from "../lookup";
import { ifMatchGuard, unchangedSince, writeLatest } from "../preconditions";
import { storedUrl } from "../stored-url";
import { newSealedSecret } from "./secrets";

/** Whether http:// and private hosts are allowed (ALLOW_INSECURE_WEBHOOKS, local only). */
export type UrlPolicy = { allowInsecure: boolean };

export type IntegrationRow = typeof notificationIntegrations.$inferSelect;

/**
 * A Slack incoming-webhook URL is itself the credential (API_CONTRACT §13): the public API shows
 * the origin, `/…` and the last 4 characters of the path, never the rest (nor any query).
 */
export function redactSlackUrl(stored: string): string {
  try {
    const url = new URL(stored);
    return `${url.origin}/…${url.pathname.slice(-4)}`;
  } catch {
    return "…";
  }
}

/** The record; `revealUrl` only for the internal API (a public answer never shows a Slack URL). */
export function toIntegrationRecord(
  row: IntegrationRow,
  opts: { revealUrl?: boolean } = {},
): IntegrationRecord {
  return {
    id: row.id,
    project_id: row.projectId,
    type: row.type,
    url: row.type === "slack" && !opts.revealUrl ? redactSlackUrl(row.url) : row.url,
    configuration: fullConfiguration(row.configuration),
    enabled: row.enabled,
    disabled_reason: row.enabled ? null : (row.disabledReason ?? "manual"),
    disabled_at: row.enabled ? null : row.disabledAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** Every flag present: a flag left out is `false`. */
export function fullConfiguration(given?: ConfigurationInput | null): NotificationConfiguration {
  const out = {} as NotificationConfiguration;
  for (const flag of NOTIFICATION_FLAGS) out[flag] = given?.[flag] === true;
  return out;
}

/**
 * The URL as it is stored: a receiver's (src/webhooks/url-guard.ts), without credentials (§33,
 * ../stored-url.ts), parsed and normalized (`new URL(u).href`, API_CONTRACT §17).
 */
export function allowedUrl(url: string, policy: UrlPolicy): string {
  const rule = (raw: string) => checkWebhookUrl(raw, policy);
  return storedUrl("url", url, rule, "The webhook URL is not allowed.").href;
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
  return insertIntegration(ctx, projectId, { ...input, url }, false);
}

/** The internal create (any type). An unknown project is `not_found`. */
export async function internalCreateIntegration(
  ctx: ServiceContext,
  projectId: string,
  input: InternalIntegrationCreateInput,
): Promise<CreatedIntegration> {
  // A project that does not exist (or vanished meanwhile): the error boundary answers 404.
  const url = allowedUrl(input.url, { allowInsecure: ctx.config.allowInsecureWebhooks });
  // The internal API may show the full URL, Slack's included.
  return insertIntegration(ctx, projectId, { ...input, url }, true);
}

/**
 * The ETag of a new integration: its record as a public GET shows it (no signing secret, a Slack
 * URL redacted), so it is the same for every caller (API_CONTRACT §12), whichever API made it.
 */
export function createdIntegrationEtag(created: CreatedIntegration): Promise<string> {
  const { signing_secret: _secret, ...record } = created;
  return recordEtag(record.type === "slack" ? { ...record, url: redactSlackUrl(record.url) } : record);
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
  input: InternalIntegrationCreateInput,
  revealUrl: boolean,
): Promise<CreatedIntegration> {
  const { db } = ctx;
  const now = nowIso();
  const id = newId();
  const { secret, stored } = await newSealedSecret(ctx, id);
  const row: IntegrationRow = {
    id,
    projectId,
    type: input.type,
    url: input.url,
    configuration: fullConfiguration(input.configuration),
    signingSecret: stored,
    previousSigningSecret: null,
    previousSecretExpiresAt: null,
    enabled: true,
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  const record = toIntegrationRecord(row);
  await db.batch([
    insertRow(db, notificationIntegrations, row),
    auditEntry(ctx, {
      target: { type: "notification_integration", id: row.id },
      projectId,
      changes: diffRecords(null, auditable(record)),
    }),
  ]);
  return { ...toIntegrationRecord(row, { revealUrl }), signing_secret: secret };
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
  return guardedPage(
    db,
    projectLookup(db, identity, projectId, "read"),
    page,
    tablePage(db, notificationIntegrations, [[notificationIntegrations.projectId, projectId]], page),
    (row) => toIntegrationRecord(row),
  );
}

/** The integration of the project in the path, with the access check, in one query. */
export function integrationLookup(
  db: Db,
  identity: Identity,
  projectId: string,
  integrationId: string,
  action: "read" | "write",
) {
  return authorizedLookup(db, identity, notificationIntegrations, integrationId, action, "Integration", [
    notificationIntegrations.projectId,
    projectId,
  ]);
}

/** `integrationLookup`, run. */
export function loadIntegration(
  db: Db,
  identity: Identity,
  projectId: string,
  integrationId: string,
  action: "read" | "write",
) {
  return runLookup(integrationLookup(db, identity, projectId, integrationId, action));
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
 * Merges the given flags into the stored configuration, optionally replaces the URL, and
 * disables (`enabled: false`, reason `manual`) or re-enables (clearing the reason, the time and
 * the run of failures) the integration. The merge is done by SQLite (`json_patch`) in the
 * UPDATE itself, so two concurrent updates of different flags both take effect. Neither
 * disabling nor re-enabling sends anything to the integration.
 */
export async function updateIntegration(
  ctx: CallerContext,
  projectId: string,
  integrationId: string,
  input: IntegrationUpdateInput,
): Promise<IntegrationRecord> {
  const { db, identity } = ctx;
  const policy = { allowInsecure: ctx.config.allowInsecureWebhooks };
  // The flags given a value: a flag given `null` is not given.
  const flags: Partial<NotificationConfiguration> = {};
  for (const [flag, value] of Object.entries(input.configuration ?? {})) {
    if (typeof value === "boolean") flags[flag as keyof NotificationConfiguration] = value;
  }
  if (input.url === undefined && input.enabled === undefined && Object.keys(flags).length === 0) {
    throw badInput("Nothing to change: give `url`, `enabled` or at least one `configuration` flag.", [
      { path: "configuration", message: "Give at least one flag, `url` or `enabled`." },
    ]);
  }
  const url = input.url === undefined ? undefined : allowedUrl(input.url, policy);
  const { row: stored } = await loadIntegration(db, identity, projectId, integrationId, "write");
  if (url !== undefined && stored.type === "slack") {
    throw badInput(
      "A Slack integration's URL is a credential and cannot be changed through the public API.",
      [{ path: "url", message: "Not allowed on a `slack` integration." }],
    );
  }
  const guard = await ifMatchGuard(ctx, stored, toIntegrationRecord);
  // Applied to the integration as it is when the write lands (`writeLatest`): the entry's `from`
  // and `to` are what this write replaced and made, even while other updates of its flags land
  // at the same moment (each then applies in turn, so none is lost).
  return writeLatest(
    db,
    notificationIntegrations,
    stored,
    async (current) => {
      const now = nowIso();
      const set: SQLiteUpdateSetSource<typeof notificationIntegrations> = { updatedAt: now };
      if (url !== undefined) set.url = url;
      if (Object.keys(flags).length > 0) {
        set.configuration = sql`json_patch(${notificationIntegrations.configuration}, ${JSON.stringify(flags)})`;
      }
      const before = toIntegrationRecord(current);
      if (input.enabled === true) {
        Object.assign(set, { enabled: true, disabledReason: null, disabledAt: null, failingSince: null });
      } else if (input.enabled === false && before.enabled) {
        // Already disabled (by the service or by hand): the first reason and time stay.
        Object.assign(set, { enabled: false, disabledReason: "manual", disabledAt: now });
      }
      const after: IntegrationRecord = {
        ...before,
        url: url ?? before.url,
        configuration: { ...before.configuration, ...flags },
        ...(input.enabled === true ? { enabled: true, disabled_reason: null, disabled_at: null } : {}),
        ...(input.enabled === false && before.enabled
          ? { enabled: false, disabled_reason: "manual" as const, disabled_at: now }
          : {}),
        updated_at: now,
      };
      const [rows] = await db.batch([
        db
          .update(notificationIntegrations)
          .set(set)
          .where(
            and(
              eq(notificationIntegrations.id, integrationId),
              unchangedSince(notificationIntegrations, current),
            ),
          )
          .returning(),
        auditEntry(ctx, {
          target: { type: "notification_integration", id: integrationId },
          projectId,
          changes: diffRecords(auditable(before), auditable(after)),
        }),
      ]);
      return rows[0] ? toIntegrationRecord(rows[0]) : undefined;
    },
    { guard, what: "Integration" },
  );
}
