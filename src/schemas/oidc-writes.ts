/** The bodies that create an OpenID Connect trust and exchange a token (API_CONTRACT §27). */
import * as z from "zod";
import { SCOPES } from "../http/scopes";
import { TOKEN_MAX_LENGTH } from "../lib/id-token";
import { ID_PATTERN } from "../lib/ids";
import {
  freeArray,
  InlineIdSchema,
  MAX_URL_BYTES,
  nullAsAbsent,
  RecordNameSchema,
  text,
} from "../openapi/primitives";
import { IDENTITY_CLAIMS, MAX_CONDITIONS, MAX_PATTERN_LENGTH, TTL_DEFAULT, TTL_MAX, TTL_MIN } from "./oidc";

type ConditionIssue = { code: "custom"; path: (string | number)[]; message: string };

/**
 * The conditions as sent. Read from the object itself rather than through a record schema, which
 * drops a `__proto__` key: a condition must never be lost on its way in, since every one narrows
 * who the trust accepts.
 */
const Conditions = z
  .unknown()
  .transform((value, ctx): Record<string, string> => {
    const fail = (issue: Omit<ConditionIssue, "code">) => {
      ctx.addIssue({ code: "custom", ...issue });
      return z.NEVER;
    };
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return fail({ path: [], message: "Expected an object of claim names to patterns." });
    }
    const entries = Object.entries(value);
    if (entries.length < 1 || entries.length > MAX_CONDITIONS) {
      return fail({ path: [], message: `Expected 1–${MAX_CONDITIONS} conditions.` });
    }
    const kept: [string, string][] = [];
    for (const [name, pattern] of entries) {
      // Any claim name (§27 names no rule for them; a JWT's claim names are any string).
      if (
        typeof pattern !== "string" ||
        pattern.length < 1 ||
        // Characters as JSON Schema's `maxLength` counts them (code points), as zod's own checks do.
        (pattern.length > MAX_PATTERN_LENGTH && [...pattern].length > MAX_PATTERN_LENGTH) ||
        !(pattern as string & { isWellFormed(): boolean }).isWellFormed()
      ) {
        ctx.addIssue({
          code: "custom",
          path: [name],
          message: `A pattern: a well-formed string of 1–${MAX_PATTERN_LENGTH} characters.`,
        });
      } else {
        kept.push([name, pattern]);
      }
    }
    if (!IDENTITY_CLAIMS.some((claim) => Object.hasOwn(value, claim))) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: "`sub` or `repository` must be among the conditions.",
      });
    }
    // `fromEntries` defines each name as an own key, `__proto__` too (an assignment would set the prototype).
    return Object.fromEntries(kept);
  })
  .openapi({
    type: "object",
    description:
      "Claim name → pattern (1–500 characters; `*` matches any run of characters, everything else itself) that " +
      "the claim's whole string value must match; a missing or non-string claim fails. 1–20 conditions, " +
      "`sub` or `repository` among them.",
    minProperties: 1,
    maxProperties: MAX_CONDITIONS,
    additionalProperties: {
      type: "string",
      minLength: 1,
      maxLength: MAX_PATTERN_LENGTH,
      pattern: "^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$",
    },
    example: { repository: "acme/storefront", ref: "refs/heads/main" },
  });

export const OidcTrustCreateBody = z
  .strictObject({
    name: RecordNameSchema,
    issuer: z
      .string()
      .min(1)
      // No rule of ours: a URL longer than Cloudflare accepts (16 KB) could never be fetched.
      .max(MAX_URL_BYTES)
      .openapi({
        format: "uri",
        example: "https://token.actions.githubusercontent.com",
        description:
          "The issuer exactly as its tokens' `iss` spells it: an `https://` URL without query, " +
          "fragment, user name or password. Its keys are found through `<issuer>/.well-known/openid-configuration`. `http://` and " +
          "loopback hosts only where `ALLOW_INSECURE_OIDC_ISSUERS=true` (local development).",
      }),
    audience: text(1, 255).openapi({
      description: "What the token's `aud` must be, or contain.",
      example: "deploy-platform",
    }),
    conditions: Conditions,
    scopes: nullAsAbsent(freeArray(z.enum(SCOPES)).min(1)).openapi({
      description: "The issued keys' scopes; default the calling key's, never more.",
      example: ["deployments:read", "deployments:write"],
    }),
    project_ids: z.array(InlineIdSchema).min(1).max(100).nullable().optional().openapi({
      description:
        "The issued keys' projects, within the calling key's own when it is restricted; default the calling key's; `null`: every project.",
    }),
    ttl: nullAsAbsent(z.number().int().min(TTL_MIN).max(TTL_MAX)).openapi({
      description: "The issued keys' lifetime in seconds, 60–3600.",
      default: TTL_DEFAULT,
      format: "int32",
    }),
  })
  .openapi("OidcTrustCreate");

export type OidcTrustCreateInput = z.infer<typeof OidcTrustCreateBody>;

/** The exchange's body: a trust, and a compact JWS (its form is checked by the exchange, as a 401). */
export const OidcTokenExchangeBody = z
  .strictObject({
    // Any string, like the token: a `trust_id` that names no trust, of whatever form, is the
    // exchange's `401` (API_CONTRACT §27: "any failure, an unknown or deleted trust included").
    // The identifier's form is published for clients.
    trust_id: z.string().openapi({
      pattern: ID_PATTERN.source,
      maxLength: 36,
      description: "The trust to exchange the token under (one that names no trust, of any form: `401`).",
      example: "7Hq3VnT5m2WcXbQ9pLk4Rz",
    }),
    // Any string: a token of another form or size is the exchange's `401` naming the check
    // (API_CONTRACT §27: every failure of the token is 401), not a validation `400`. The form is
    // published for clients (./verify.ts checks it, size first).
    token: z.string().openapi({
      minLength: 1,
      maxLength: TOKEN_MAX_LENGTH,
      pattern: "^[A-Za-z0-9_.=-]+$",
      description: "The CI run's ID token (a JWT, `RS256` or `ES256`).",
      example: "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJyZXBvOmFjbWUvc3RvcmVmcm9udCJ9.c2lnbmF0dXJl",
    }),
  })
  .openapi("OidcTokenExchange");

export type OidcTokenExchangeInput = z.infer<typeof OidcTokenExchangeBody>;
