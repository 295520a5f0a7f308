/** Internal bodies and records of organizations, their members and their API keys. */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../../../db/schema";
import { SCOPES } from "../../../http/scopes";
import { freeString, IdSchema, instant, nullAsAbsent } from "../../../openapi/primitives";

export const OrgMemberBody = z.strictObject({ account_id: IdSchema, role: z.enum(ORG_ROLES) });

export const ApiKeyCreateBody = z.strictObject({
  account_id: IdSchema,
  created_by: IdSchema,
  // A plain string (API_CONTRACT §9 gives no length): the body bounds it.
  name: freeString().nullable().optional(),
  expires_at: instant().nullable().optional(),
  /** API_CONTRACT §15: a non-empty list of scopes; absent (or null) means `["*"]`. */
  scopes: nullAsAbsent(z.array(z.enum(SCOPES)).min(1)),
  /** 1–100 projects of the organization; absent or null means every project. */
  project_ids: z.array(IdSchema).min(1).max(100).nullable().optional(),
});
