/**
 * Organizations, accounts, org memberships and API keys (API_CONTRACT §3, §5, §9): the API's
 * schemas and the services' types, one source.
 */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../http/openapi";

export const OrganizationSchema = z
  .object({ id: IdSchema, name: z.string(), created_at: TimestampSchema })
  .openapi("Organization");

const profileField = z.string().nullable();

export const AccountSchema = z.object({
  id: IdSchema,
  name: z.string(),
  display_name: z.string(),
  avatar: z.string().nullable(),
  profile: z.object({
    bio: profileField,
    github: profileField,
    location: profileField,
    twitter: profileField,
    website: profileField,
  }),
  created_at: TimestampSchema,
});

export const OrgMemberSchema = z.object({
  org_id: IdSchema,
  account_id: IdSchema,
  role: z.enum(ORG_ROLES),
  created_at: TimestampSchema,
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

export type OrganizationRecord = z.infer<typeof OrganizationSchema>;
export type AccountRecord = z.infer<typeof AccountSchema>;
export type OrgMemberRecord = z.infer<typeof OrgMemberSchema>;
export type ApiKeyRecord = z.infer<typeof CreatedApiKeySchema>;
