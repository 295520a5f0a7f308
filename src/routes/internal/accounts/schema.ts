/** Internal body and record of accounts (API_CONTRACT §3 "Account", §9). */
import { z } from "@hono/zod-openapi";

const nullableString = (max: number) => z.string().max(max).nullable().optional();

export const AccountCreateBody = z.strictObject({
  name: z.string().min(1).max(100),
  display_name: nullableString(100),
  avatar: nullableString(2048),
  profile: z
    .strictObject({
      bio: nullableString(1000),
      github: nullableString(100),
      location: nullableString(200),
      twitter: nullableString(100),
      website: nullableString(2048),
    })
    .partial()
    .nullable()
    .optional(),
});
