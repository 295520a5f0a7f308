/**
 * The notification tables: integrations, events, deliveries and their attempts (API_CONTRACT
 * §8). Part of the one schema: src/db/schema.ts re-exports them, and drizzle-kit reads them
 * through it.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, updatedAt } from "./columns";
import { projectRef } from "./core-tables";
import {
  DELIVERY_STATUSES,
  DISABLED_REASONS,
  INTEGRATION_TYPES,
  type NotificationConfiguration,
} from "./values";

export const notificationIntegrations = sqliteTable(
  "notification_integrations",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    type: text("type", { enum: INTEGRATION_TYPES }).notNull(),
    url: text("url").notNull(),
    configuration: text("configuration", { mode: "json" }).$type<NotificationConfiguration>().notNull(),
    /** `whsec_…`, needed in clear to sign deliveries. */
    signingSecret: text("signing_secret").notNull(),
    /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
    previousSigningSecret: text("previous_signing_secret"),
    previousSecretExpiresAt: text("previous_secret_expires_at"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    disabledReason: text("disabled_reason", { enum: DISABLED_REASONS }),
    disabledAt: text("disabled_at"),
    /** When the current run of failed attempts began (null after a success or a re-enable). */
    failingSince: text("failing_since"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index("notification_integrations_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("notification_integrations_previous_secret_idx")
      .on(t.previousSecretExpiresAt)
      .where(sql`previous_secret_expires_at IS NOT NULL`),
  ],
);

/** An event, written durably before anything is sent to the queue. */
export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    type: text("type").notNull(),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** When the fan-out messages were accepted by the queue; null until then. */
    enqueuedAt: text("enqueued_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("events_project_created_idx").on(t.projectId, t.createdAt, t.id),
    index("events_pending_idx").on(t.createdAt).where(sql`enqueued_at IS NULL`),
    // The retention cron deletes the oldest events first, across projects.
    index("events_created_idx").on(t.createdAt, t.id),
  ],
);

/** One per (event, integration): the unit of delivery and retry. */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    projectId: projectRef(),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    integrationId: text("integration_id")
      .notNull()
      .references(() => notificationIntegrations.id, { onDelete: "cascade" }),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    /**
     * Which series of attempts is current: 0 for the fan-out's, +1 for each redeliver or recover.
     * A message of an older series (still retrying, or dead-lettered) changes nothing.
     */
    series: integer("series").notNull().default(0),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    nextAttemptAt: text("next_attempt_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_integration_idx").on(t.eventId, t.integrationId),
    index("webhook_deliveries_integration_created_idx").on(t.integrationId, t.createdAt, t.id),
    index("webhook_deliveries_project_idx").on(t.projectId),
    // Deliveries still to send, by integration and due time: the sweep finds those left behind.
    index("webhook_deliveries_pending_due_idx")
      .on(t.integrationId, t.nextAttemptAt)
      .where(sql`status = 'pending'`),
  ],
);

/** Every attempt of a delivery, for the deliveries endpoint and debugging. */
export const deliveryAttempts = sqliteTable(
  "delivery_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    nextAttemptAt: text("next_attempt_at"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("delivery_attempts_delivery_attempt_idx").on(t.deliveryId, t.attempt)],
);
