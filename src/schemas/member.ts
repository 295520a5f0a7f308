/**
 * The project member record (API_CONTRACT §3 "Member") and the bodies that add and replace
 * members: the API's schemas and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { ORG_ROLES, PROJECT_ROLES } from "../db/schema";
import {
  echoedReadOnlyFields,
  freeString,
  IdSchema,
  TimestampSchema,
  wellFormed,
} from "../openapi/primitives";

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

export const MemberAddSchema = z
  .strictObject({
    account_ids: z
      .array(IdSchema)
      .min(1)
      .max(MAX_ADD_ACCOUNTS)
      .superRefine((ids, ctx) => {
        const seen = new Set<string>();
        ids.forEach((id, index) => {
          if (seen.has(id)) {
            ctx.addIssue({ code: "custom", path: [index], message: `Duplicate account ID ${id}.` });
          }
          seen.add(id);
        });
      })
      .openapi({
        description: `1–${MAX_ADD_ACCOUNTS} distinct account IDs, each a member of the project's organization.`,
      }),
    // Absent or `null`: `viewer`.
    role: ProjectRoleSchema.nullable()
      .optional()
      .transform((role) => role ?? "viewer")
      .openapi({ description: "Role given to every added account (default `viewer`).", default: "viewer" }),
  })
  .openapi("ProjectMemberAdd");

export const MemberAddResultSchema = z
  .object({ data: z.array(MemberSchema).openapi({ description: "The new members, in request order." }) })
  .openapi("ProjectMemberAddResult");

export const MemberReplaceSchema = z
  .strictObject({ ...echoedReadOnlyFields(MemberSchema, ["role"]), role: ProjectRoleSchema })
  .openapi("ProjectMemberReplace", {
    description:
      "The new project role. The member record's read-only fields may be sent back as read; they change " +
      "nothing, and `project_id` and `account_id` must match the path.",
  });

export type MemberAddInput = z.infer<typeof MemberAddSchema>;
export type MemberReplaceInput = z.infer<typeof MemberReplaceSchema>;
