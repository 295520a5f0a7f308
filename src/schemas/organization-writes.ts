/** The bodies that create organizations, accounts, org memberships and API keys (API_CONTRACT §3, §5, §9, §21). */
import * as z from "zod";
import { ORG_ROLES } from "../db/schema";
import { MAX_BODY_BYTES } from "../http/raw-body";
import { SCOPES } from "../http/scopes";
import {
  freeArray,
  freeString,
  IdSchema,
  InlineIdSchema,
  instant,
  nullAsAbsent,
  recordName,
  text,
} from "../openapi/primitives";

/**
 * An organization's name: 1–100 characters (API_CONTRACT §3), any of them. §33's readable names
 * are those it lists (a project's, an environment's, an integration's, an API key's, a trust's, an
 * audit stream's), and part five changes no behaviour above that it does not name.
 */
const orgName = () => text(1, 100).openapi({ example: "Acme" });

export const OrganizationCreateSchema = z.strictObject({ name: orgName() }).openapi("OrganizationCreate");

/** An organization's body: its name (above). */
export const OrgNameBody = z.strictObject({ name: orgName() });

/**
 * The internal create: a name and, optionally, the organization database to place it in (one of
 * ORG_DATABASES; by default placed by a hash of its id, src/db/databases.ts).
 */
export const InternalOrgCreateBody = OrgNameBody.extend({ database: z.string().min(1).max(63).optional() });

export const OrgMemberBody = z.strictObject({ account_id: IdSchema, role: z.enum(ORG_ROLES) });

export const ApiKeyCreateBody = z.strictObject({
  account_id: IdSchema,
  created_by: IdSchema,
  // No length (API_CONTRACT §9 gives none: the body bounds it), but readable (§33).
  name: recordName(MAX_BODY_BYTES).nullable().optional(),
  expires_at: instant().nullable().optional(),
  /** API_CONTRACT §15: a non-empty list of scopes; absent (or null) means `["*"]`. */
  scopes: nullAsAbsent(z.array(z.enum(SCOPES)).min(1)),
  /** 1–100 projects of the organization; absent or null means every project. */
  project_ids: z.array(IdSchema).min(1).max(100).nullable().optional(),
});

// SPEC.md types the account's display name, avatar and profile fields as plain strings: no
// limit but the body's (1 MiB, API_CONTRACT §6); so is its name (only organization and project
// names have 1–100).
const nullableString = () => freeString().nullable().optional();

export const AccountCreateBody = z.strictObject({
  name: freeString(),
  display_name: nullableString(),
  avatar: nullableString(),
  profile: z
    .strictObject({
      bio: nullableString(),
      github: nullableString(),
      location: nullableString(),
      twitter: nullableString(),
      website: nullableString(),
    })
    .partial()
    .nullable()
    .optional(),
});

/**
 * `POST /v1/api-keys` (API_CONTRACT §21): every field optional; left out, a field is the calling
 * key's own. Explicit `null` asks for no restriction (`project_ids`) or no expiry (`expires_at`);
 * for `scopes` it is "left out", as for the internal create (§15), and for `name` no name.
 */
export const ApiKeyDeriveBody = z
  .strictObject({
    name: recordName().nullable().optional().openapi({ example: "ci storefront" }),
    // A scope given twice counts once: no bound but the body's.
    scopes: nullAsAbsent(freeArray(z.enum(SCOPES)).min(1)).openapi({
      example: ["deployments:read", "deployments:write"],
    }),
    project_ids: z.array(InlineIdSchema).min(1).max(100).nullable().optional().openapi({
      description:
        "1–100 projects of the organization, within the calling key's own when it is restricted; `null`: every project.",
    }),
    expires_at: instant()
      .nullable()
      .optional()
      .openapi({
        // The instant's own metadata says `string`: the null this field also takes is spelled out.
        type: ["string", "null"],
        description: "In the future; `null`: never.",
      }),
  })
  .openapi("ApiKeyCreate");

export type ApiKeyDeriveInput = z.infer<typeof ApiKeyDeriveBody>;

export type OrganizationCreateInput = z.infer<typeof OrganizationCreateSchema>;
export type OrgMemberInput = z.infer<typeof OrgMemberBody>;
export type ApiKeyCreateInput = z.infer<typeof ApiKeyCreateBody>;
export type AccountCreateInput = z.infer<typeof AccountCreateBody>;
