/**
 * An organization's limits (API_CONTRACT §29): the record `GET /v1/orgs/{org_id}/limits` and the
 * internal `PUT` answer, and the names in the contract's order. The internal body is
 * ./limits-writes.ts: a read builds none.
 */
import * as z from "zod";
import { IdSchema } from "../openapi/primitives";

/** Every limit, in the contract's table order (the record lists them so). */
const COUNT_LIMIT_NAMES = [
  "projects",
  "environments",
  "variables",
  "api_keys",
  "integrations",
  "audit_streams",
] as const;
export const LIMIT_NAMES = [...COUNT_LIMIT_NAMES, "deployments_per_day"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The highest limit an operator may set (API_CONTRACT §29). */
export const MAX_LIMIT = 1_000_000;

const limitValue = () => z.number().int().min(0).max(MAX_LIMIT);
const usedValue = () => z.number().int().min(0).openapi({ description: "Exact at the moment of the read." });

/** Every limit but the daily one: a count of what the organization holds now. */
const CountLimitSchema = z
  .object({
    name: z.enum(COUNT_LIMIT_NAMES),
    limit: limitValue(),
    used: usedValue(),
  })
  .openapi("OrgCountLimit");

/** `deployments_per_day`: a window sliding with `created_at`, and when its oldest deployment leaves it. */
const DailyLimitSchema = z
  .object({
    name: z.literal("deployments_per_day"),
    limit: limitValue(),
    used: usedValue(),
    reset: z.number().int().min(0).openapi({
      description:
        "Whole seconds, rounded up, until the oldest deployment it counts leaves the 24-hour window (0 when it counts none).",
    }),
  })
  .openapi("OrgDailyLimit");

export const OrgLimitsSchema = z
  .object({
    org_id: IdSchema,
    limits: z
      .array(z.union([CountLimitSchema, DailyLimitSchema]))
      .openapi({ description: `Every limit, in this order: ${LIMIT_NAMES.join(", ")}.` }),
  })
  .openapi("OrgLimits");

export type OrgLimitsRecord = z.infer<typeof OrgLimitsSchema>;
