/**
 * OpenID Connect trusts (API_CONTRACT §27): the trust record and its bounds; the API's schema and
 * the services' types, one source. The bodies that create one and exchange a token are
 * ./oidc-writes.ts.
 */
import * as z from "zod";
import { SCOPES } from "../http/scopes";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

/** How long an issued key lives, in seconds (§27). */
export const TTL_MIN = 60;
export const TTL_MAX = 3600;
export const TTL_DEFAULT = 900;

/** A trust's conditions: 1–20 claims, each a pattern of 1–500 characters (§27). */
export const MAX_CONDITIONS = 20;
export const MAX_PATTERN_LENGTH = 500;
/** The conditions that name who the token is for: at least one of them must be among a trust's. */
export const IDENTITY_CLAIMS = ["sub", "repository"] as const;

export const OidcTrustSchema = z
  .object({
    id: IdSchema,
    org_id: IdSchema,
    account_id: IdSchema.openapi({ description: "The account its keys act as: the creating key's." }),
    parent_id: IdSchema.openapi({
      description: "The key that made it; its keys are made under it, so revoking it revokes them (§21).",
    }),
    name: z.string(),
    issuer: z.string().openapi({ example: "https://token.actions.githubusercontent.com" }),
    audience: z.string().openapi({ example: "deploy-platform" }),
    conditions: z.record(z.string(), z.string()).openapi({
      description:
        "Claim name → pattern; every one must match the claim's whole string value (`*`: any run).",
      example: { repository: "acme/storefront", ref: "refs/heads/main" },
    }),
    scopes: z.array(z.enum(SCOPES)),
    project_ids: z.array(IdSchema).nullable(),
    ttl: z.number().int().openapi({ description: "The issued keys' lifetime, in seconds." }),
    created_at: TimestampSchema,
  })
  .openapi("OidcTrust");

export type OidcTrustRecord = z.infer<typeof OidcTrustSchema>;
