/** The project member record (API_CONTRACT §3 "Member"): the API's schema and the services' type, one source. */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES, PROJECT_ROLES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../http/openapi";
import { text } from "../http/text";

// The account's fields, with the limits the account was created with (internal AccountCreateBody).
const nullableText = (max: number) => text(0, max).nullable();

export const ProjectRoleSchema = z
  .enum(PROJECT_ROLES)
  .openapi({ description: "Project role: `owner` manages the project and its members." });

export const MemberSchema = z
  .object({
    account_id: IdSchema.openapi({ description: "The member's account; the `{member_id}` of member paths." }),
    membership_id: IdSchema.openapi({ description: "The project membership." }),
    project_id: IdSchema,
    name: text(1, 100),
    display_name: text(0, 100).openapi({ description: "Defaults to `name`." }),
    avatar: nullableText(2048),
    org_role: z.enum(ORG_ROLES).openapi({ description: "The account's role in the organization." }),
    role: ProjectRoleSchema,
    profile: z.object({
      bio: nullableText(1000),
      github: nullableText(100),
      location: nullableText(200),
      twitter: nullableText(100),
      website: nullableText(2048),
    }),
    created_at: TimestampSchema.openapi({ description: "When the membership was made." }),
  })
  .openapi("ProjectMember");

export type MemberRecord = z.infer<typeof MemberSchema>;
