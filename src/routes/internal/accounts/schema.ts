/** Internal body and record of accounts (API_CONTRACT §3 "Account", §9). */
import { z } from "@hono/zod-openapi";
import { freeString } from "../../../openapi/primitives";

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
