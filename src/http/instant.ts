/**
 * Instants in requests: any RFC 3339 date-time, with `Z` or an offset, with or without a
 * fraction, and with `T` and `Z` in either case (RFC 3339 §5.6 allows `t` and `z`), read as
 * the instant it names and handed on as the stored form (`…T…Z`, UTC, milliseconds).
 */
import { z } from "@hono/zod-openapi";

const DATE_TIME = z.iso.datetime({ offset: true });

export const instant = () =>
  z
    .string()
    .max(64)
    // zod's date-time check takes only upper-case `T` and `Z`; no other character of a
    // date-time has a case.
    .refine((value) => DATE_TIME.safeParse(value.toUpperCase()).success, "Expected an RFC 3339 date-time.")
    .transform((value) => new Date(value.toUpperCase()).toISOString())
    .openapi({ type: "string", format: "date-time", example: "2026-11-20T00:00:00.000Z", maxLength: 64 });
