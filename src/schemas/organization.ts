/**
 * Organizations, accounts, org memberships and API keys (API_CONTRACT §3, §5, §9): the API's
 * schemas and the services' types, one source.
 */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../db/schema";
import { SCOPES } from "../http/scopes";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

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
/** API_CONTRACT §15: a key's record (`GET /v1/api-keys/current`). Never the key itself. */
export const ApiKeySchema = z
  .object({
    id: IdSchema,
    name: z.string().nullable(),
    org_id: IdSchema,
    account_id: IdSchema.openapi({ description: "The account the key acts as." }),
    scopes: z.array(z.enum(SCOPES)).openapi({
      description: "What the key may do: `*` (everything its account's roles allow) or a list of scopes.",
    }),
    project_ids: z.array(IdSchema).nullable().openapi({
      description:
        "The only projects the key may see (every other project is `404` to it), or null: every project.",
    }),
    expires_at: TimestampSchema.nullable(),
    last_used_at: TimestampSchema.nullable().openapi({
      description: "When the key was last used; refreshed at most once a minute.",
    }),
    created_at: TimestampSchema,
  })
  .openapi("ApiKey");

/** The internal create's answer: the record, who issued it, and the key (shown only here). */
export const CreatedApiKeySchema = ApiKeySchema.extend({ key: z.string(), created_by: IdSchema });

export type OrganizationRecord = z.infer<typeof OrganizationSchema>;
export type AccountRecord = z.infer<typeof AccountSchema>;
export type OrgMemberRecord = z.infer<typeof OrgMemberSchema>;
export type ApiKeyInfo = z.infer<typeof ApiKeySchema>;
export type ApiKeyRecord = z.infer<typeof CreatedApiKeySchema>;
