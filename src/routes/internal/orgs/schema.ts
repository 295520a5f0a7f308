/** Internal bodies and records of organizations, their members and their API keys. */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../../../db/schema";
import { IdSchema } from "../../../http/openapi";

export const OrgMemberBody = z.strictObject({ account_id: IdSchema, role: z.enum(ORG_ROLES) });

export const ApiKeyCreateBody = z.strictObject({
  account_id: IdSchema,
  created_by: IdSchema,
  name: z.string().max(100).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
});
