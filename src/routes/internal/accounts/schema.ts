/** Internal body and record of accounts (API_CONTRACT §3 "Account", §9). */
import { z } from "@hono/zod-openapi";
import { IdSchema, TimestampSchema } from "../../../http/openapi";

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
