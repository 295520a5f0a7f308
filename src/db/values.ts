/**
 * The value lists of the domain's enum columns and the shapes of its JSON columns: one
 * constant each, used by the tables (src/db/schema.ts), the API's schemas and the services.
 */
import type { NotificationConfiguration } from "./event-types";

export const ORG_ROLES = ["owner", "admin", "member"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export const PROJECT_ROLES = ["owner", "contributor", "viewer"] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];
export const CONNECTION_STATUSES = ["connected", "disconnected", "disconnecting"] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
export const VARIABLE_TYPES = ["secret", "secure_string", "string"] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];
export const RESOURCE_STATUSES = [
  "create_in_progress",
  "create_complete",
  "create_failed",
  "update_in_progress",
  "update_complete",
  "update_failed",
  "delete_in_progress",
  "delete_complete",
  "delete_failed",
] as const;
export type ResourceStatus = (typeof RESOURCE_STATUSES)[number];
/** `waiting` (API_CONTRACT §26): held by its environment's protection, never handed to the engine. */
export const DEPLOYMENT_STATUSES = [
  "waiting",
  "queued",
  "in_progress",
  "succeeded",
  "failed",
  "cancelled",
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];
/** The statuses a deployment never leaves (src/services/deployments/state.ts is the machine). */
export const FINAL_DEPLOYMENT_STATUSES: readonly DeploymentStatus[] = ["succeeded", "failed", "cancelled"];
/** A deployment timeline entry's kind (API_CONTRACT §19): a status change, or a line of the engine's log. */
export const TIMELINE_ENTRY_TYPES = ["status", "log"] as const;
export type TimelineEntryType = (typeof TIMELINE_ENTRY_TYPES)[number];
export const LOG_STREAMS = ["stdout", "stderr"] as const;
export type LogStream = (typeof LOG_STREAMS)[number];
export const INTEGRATION_TYPES = ["slack", "webhook"] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "skipped"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DISABLED_REASONS = ["failing", "gone", "manual"] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

export type AccountProfile = {
  bio: string | null;
  github: string | null;
  location: string | null;
  twitter: string | null;
  website: string | null;
};

/** The integration's switches, one per event type (./event-types.ts is their one table). */
export type { NotificationConfiguration };

export type DeploymentData = {
  patch: Array<{ op: string; path: string; from?: string; value?: unknown; old_value?: unknown }>;
  source?: Record<string, unknown>;
  stacks?: Array<{ id: string; status: DeploymentStatus; status_reason?: string; timestamp: string }>;
};

/** A move of an organization between databases (API_CONTRACT §32). */
export const MOVE_STATES = ["copying", "switching", "completed", "cancelled", "failed"] as const;
