/**
 * Instants in requests: any RFC 3339 date-time, with `Z` or an offset, with or without a
 * fraction, and with `T` and `Z` in either case (RFC 3339 §5.6 allows `t` and `z`), read as
 * the instant it names and handed on as the stored form (`…T…Z`, UTC, milliseconds).
 *
 * RFC 3339 §5.6 also allows a leap second (`23:59:60` in UTC, e.g. `2016-12-31T23:59:60Z` or
 * `2017-01-01T00:59:60+01:00`), which JavaScript's Date cannot hold: it is read as the last
 * instant before it, `23:59:59` with the same fraction, as POSIX time counts it.
 */
import { z } from "@hono/zod-openapi";

const DATE_TIME = z.iso.datetime({ offset: true });
/** The seconds field of an RFC 3339 date-time: `…T hh:mm:ss` then a fraction or the zone. */
const LEAP_SECOND = /^(.{10}T\d{2}:\d{2}:)60(?=[.Z+-])/;

/** The instant `value` names (upper-cased), or undefined when it is no RFC 3339 date-time. */
function read(value: string): Date | undefined {
  const leap = LEAP_SECOND.test(value);
  const text = leap ? value.replace(LEAP_SECOND, "$159") : value;
  if (!DATE_TIME.safeParse(text).success) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return undefined;
  // A leap second exists only as the last second of a UTC day.
  if (leap && (date.getUTCHours() !== 23 || date.getUTCMinutes() !== 59)) return undefined;
  return date;
}

export const instant = () =>
  z
    .string()
    .max(64)
    // zod's date-time check takes only upper-case `T` and `Z`; no other character of a
    // date-time has a case.
    .refine((value) => read(value.toUpperCase()) !== undefined, "Expected an RFC 3339 date-time.")
    .transform((value) => (read(value.toUpperCase()) as Date).toISOString())
    .openapi({ type: "string", format: "date-time", example: "2026-11-20T00:00:00.000Z", maxLength: 64 });
