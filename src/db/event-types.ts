/**
 * The one table of event types (API_CONTRACT §8): each type's notification flag (the
 * integration's `configuration` switch that turns its deliveries on), what it means, and who
 * may emit it. The flags of the database column, the services, the fan-out and the OpenAPI
 * document are all read from here, so adding an event type is one line.
 */
export const EVENT_TYPE_TABLE = {
  "deployment.failed": {
    flag: "deployments_failed",
    description: "a deployment failed.",
    emittedBy: "deployment",
  },
  "deployment.in_progress": {
    flag: "deployments_in_progress",
    description: "a deployment started.",
    emittedBy: "deployment",
  },
  "deployment.succeeded": {
    flag: "deployments_succeeded",
    description: "a deployment succeeded.",
    emittedBy: "deployment",
  },
  "changelog.created": {
    flag: "changelog",
    description: "a changelog entry was published.",
    emittedBy: "internal",
  },
  "promotion.created": { flag: "promotions", description: "a promotion happened.", emittedBy: "internal" },
  "service.in_alarm": {
    flag: "services_in_alarm",
    description: "a service went into alarm.",
    emittedBy: "internal",
  },
  "service.ok": { flag: "services_ok", description: "a service is OK again.", emittedBy: "internal" },
  // API_CONTRACT §31: every step of a gate, under one flag (an eighth, `false` unless set).
  "deployment.waiting": {
    flag: "deployment_gates",
    description: "created waiting.",
    emittedBy: "gate",
  },
  "deployment.reviewed": {
    flag: "deployment_gates",
    description: "reviewed.",
    emittedBy: "gate",
  },
  "deployment.check_concluded": {
    flag: "deployment_gates",
    description: "a check concluded.",
    emittedBy: "gate",
  },
  "deployment.released": {
    flag: "deployment_gates",
    description: "released.",
    emittedBy: "gate",
  },
  "environment.locked": {
    flag: "deployment_gates",
    description: "locked.",
    emittedBy: "gate",
  },
  "environment.unlocked": {
    flag: "deployment_gates",
    description: "unlocked.",
    emittedBy: "gate",
  },
} as const;

type Table = typeof EVENT_TYPE_TABLE;
export type EventType = keyof Table;
export type NotificationFlag = Table[EventType]["flag"];
/** Deployment events come only from deployment transitions; the internal API may emit the rest. */
export type InternalEventType = {
  [T in EventType]: Table[T]["emittedBy"] extends "internal" ? T : never;
}[EventType];

/** An integration's switches: every flag, `true` to receive that event type. */
export type NotificationConfiguration = Record<NotificationFlag, boolean>;

const entries = Object.entries(EVENT_TYPE_TABLE) as Array<[EventType, Table[EventType]]>;

export const EVENT_TYPES = entries.map(([type]) => type) as [EventType, ...EventType[]];
export const INTERNAL_EVENT_TYPES = entries
  .filter(([, row]) => row.emittedBy === "internal")
  .map(([type]) => type) as [InternalEventType, ...InternalEventType[]];
/**
 * In the table's order (each once: one flag may switch several types, as `deployment_gates` does),
 * which is the order of `configuration`'s keys in every response.
 */
export const NOTIFICATION_FLAGS = [...new Set(entries.map(([, row]) => row.flag))] as [
  NotificationFlag,
  ...NotificationFlag[],
];

export const EVENT_FLAG = Object.fromEntries(entries.map(([type, row]) => [type, row.flag])) as {
  [T in EventType]: Table[T]["flag"];
};

/** The flag's description in the OpenAPI document: "`<event type>`: <what it means>", for each type it switches. */
export const FLAG_DESCRIPTION = Object.fromEntries(
  NOTIFICATION_FLAGS.map((flag) => [
    flag,
    entries
      .filter(([, row]) => row.flag === flag)
      .map(([type, row]) => `\`${type}\`: ${row.description}`)
      .join(" "),
  ]),
) as Record<NotificationFlag, string>;

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_TYPE_TABLE, value);
}
