/** The operator's change of an organization's limits (API_CONTRACT §29, `PUT /internal/v1/orgs/{org_id}/limits`). */
import * as z from "zod";
import { LIMIT_NAMES, type LimitName, MAX_LIMIT } from "./limits";

const limitValue = z.number().int().min(0).max(MAX_LIMIT);

/** Any of the names, each an integer 0–1,000,000; the names left out keep their limit. */
export const OrgLimitsBody = z.strictObject(
  Object.fromEntries(LIMIT_NAMES.map((name) => [name, limitValue.optional()])) as Record<
    LimitName,
    z.ZodOptional<typeof limitValue>
  >,
);
export type OrgLimitsInput = z.infer<typeof OrgLimitsBody>;
