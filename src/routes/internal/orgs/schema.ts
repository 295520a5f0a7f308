/** Internal bodies and records of organizations, their members and their API keys. */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../../../db/schema";
import { IdSchema, TimestampSchema } from "../../../http/openapi";

export const OrgMemberBody = z.strictObject({ account_id: IdSchema, role: z.enum(ORG_ROLES) });

export const OrgMemberSchema = z.object({
  org_id: IdSchema,
  account_id: IdSchema,
  role: z.enum(ORG_ROLES),
  created_at: TimestampSchema,
});

export const ApiKeyCreateBody = z.strictObject({
  account_id: IdSchema,
  created_by: IdSchema,
  name: z.string().max(100).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
});

/** The new key, with its secret: the only time `key` is shown. */
export const CreatedApiKeySchema = z.object({
  id: IdSchema,
  key: z.string(),
  org_id: IdSchema,
  account_id: IdSchema,
  created_by: IdSchema,
  name: z.string().nullable(),
  expires_at: TimestampSchema.nullable(),
  created_at: TimestampSchema,
});
