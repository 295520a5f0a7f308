/**
 * What a delivery lane (./object.ts) is handed and what it holds: the only contract between the
 * services that hand deliveries over (the fan-out, redeliver, recover, the sweep: ./client.ts) and
 * the object.
 */

/**
 * One delivery for its lane: the series of attempts it is in, whether an operator asked for it,
 * and the D1 bookmark of the write that made its row (the fan-out's), from which its attempt's
 * first read starts on a replica; without one (a sweep's or an operator's hand-over) it reads the
 * primary.
 */
export type LaneEntry = {
  deliveryId: string;
  series: number;
  manual: boolean;
  bookmark?: string | null;
  /** The organization database the delivery is in (src/db/databases.ts); set by `scheduleDeliveries`. */
  database?: string | null;
};

/** An entry as the lane holds it (for tests and diagnostics). */
export type HeldEntry = LaneEntry & { tries: number; dueAt: number };

/**
 * How a delivery is handed over (again): the series it is in, `manual` when an operator started
 * that series. A series above 0 was started by an operator (redeliver, recover), so it is sent
 * even while the integration is disabled; the fan-out's series is 0.
 */
export const entryOf = (deliveryId: string, series: number): LaneEntry => ({
  deliveryId,
  series,
  manual: series > 0,
});
