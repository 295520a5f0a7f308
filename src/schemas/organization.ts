/**
 * Organizations, accounts, org memberships and API keys (API_CONTRACT §3, §5, §9): their records;
 * the API's schemas and the services' types (their `z.infer`), one source. The bodies that create
 * them, public and internal, are ./organization-writes.ts: a read builds none.
 */
import * as z from "zod";
import { ORG_ROLES } from "../db/schema";
import { SCOPES } from "../http/scopes";
import { IdSchema, InlineIdSchema, TimestampSchema } from "../openapi/primitives";

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

/**
 * API_CONTRACT §15, §21: the calling key's record (`GET /v1/api-keys/current`). Never the key
 * itself, nor its hash.
 */
export const CurrentApiKeySchema = z
  .object({
    id: IdSchema,
    name: z.string().nullable(),
    org_id: IdSchema,
    account_id: IdSchema.openapi({ description: "The account the key acts as." }),
    parent_id: InlineIdSchema.nullable().openapi({ description: "The key that made it, or null." }),
    scopes: z
      .array(z.enum(SCOPES))
      .openapi({ description: "`*` (all its account's roles allow) or scopes." }),
    project_ids: z
      .array(IdSchema)
      .nullable()
      .openapi({ description: "The only projects the key may see, or null: every project." }),
    expires_at: TimestampSchema.nullable(),
    last_used_at: TimestampSchema.nullable().openapi({
      description: "Written on the first use after a quiet spell, then at most once every 5 minutes.",
    }),
    created_at: TimestampSchema,
    oidc: z
      .object({
        trust_id: IdSchema,
        subject: z.string().nullable().openapi({
          description: "The `sub` of the ID token it was exchanged for; null for a token without one.",
        }),
      })
      .nullable()
      .openapi({
        description:
          "For a key an OpenID Connect trust issued (`POST /v1/oidc/token`): the trust and the token's subject; else null.",
      }),
  })
  .openapi("CurrentApiKey");

/** A key's record in the key lists: the calling key's form and when it was revoked. */
export const ApiKeySchema = CurrentApiKeySchema.extend({
  revoked_at: TimestampSchema.nullable().openapi({
    description: "When it, or a key it was made from, was revoked; null while it works.",
  }),
}).openapi("ApiKey");

/** `POST /v1/api-keys`: the new key's record and the key itself, shown only there. */
export const NewApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({
    description: "The key (`x-api-key`), shown only here.",
    example: "dpk_EXAMPLEexampleEXAMPLEexampleEXAMPLEexample1",
  }),
}).openapi("NewApiKey");

/** The internal create's answer: the calling-key form, who issued it, and the key (shown only here). */
export const CreatedApiKeySchema = CurrentApiKeySchema.extend({ key: z.string(), created_by: IdSchema });

export type OrganizationRecord = z.infer<typeof OrganizationSchema>;
export type AccountRecord = z.infer<typeof AccountSchema>;
export type OrgMemberRecord = z.infer<typeof OrgMemberSchema>;
export type ApiKeyInfo = z.infer<typeof ApiKeySchema>;
export type CurrentApiKeyInfo = z.infer<typeof CurrentApiKeySchema>;
export type NewApiKeyRecord = z.infer<typeof NewApiKeySchema>;
export type ApiKeyRecord = z.infer<typeof CreatedApiKeySchema>;
