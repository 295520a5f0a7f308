/**
 * The project member record (API_CONTRACT §3 "Member"): the API's schema and the services' type
 * (its `z.infer`), one source. The bodies that add and replace members are ./member-writes.ts.
 */
import * as z from "zod";
import { ORG_ROLES, PROJECT_ROLES } from "../db/schema";
import { freeString, IdSchema, TimestampSchema, wellFormed } from "../openapi/primitives";

// The account's fields as the account was created (internal AccountCreateBody): free strings.
const nullableText = () => wellFormed(freeString()).nullable();

export const ProjectRoleSchema = z
  .enum(PROJECT_ROLES)
  .openapi({ description: "Project role: `owner` manages the project and its members." });

export const MemberSchema = z
  .object({
    account_id: IdSchema.openapi({ description: "The member's account; the `{member_id}` of member paths." }),
    membership_id: IdSchema.openapi({ description: "The project membership." }),
    project_id: IdSchema,
    name: wellFormed(freeString()).openapi({
      description: "The account's name, as the account was created.",
    }),
    display_name: wellFormed(freeString()).openapi({ description: "Defaults to `name`." }),
    avatar: nullableText(),
    org_role: z.enum(ORG_ROLES).openapi({ description: "The account's role in the organization." }),
    role: ProjectRoleSchema,
    profile: z.object({
      bio: nullableText(),
      github: nullableText(),
      location: nullableText(),
      twitter: nullableText(),
      website: nullableText(),
    }),
    created_at: TimestampSchema.openapi({ description: "When the membership was made." }),
  })
  .openapi("ProjectMember");

export type MemberRecord = z.infer<typeof MemberSchema>;

/** API_CONTRACT §3: at most 100 distinct accounts per add request. */
export const MAX_ADD_ACCOUNTS = 100;
