import { z } from "@hono/zod-openapi";
import { ORG_ROLES, PROJECT_ROLES } from "../../db/schema";
import {
  echoedReadOnlyFields,
  envelope,
  IdSchema,
  idParams,
  ListQuerySchema,
  TimestampSchema,
} from "../../http/openapi";
import { text } from "../../http/text";

/** API_CONTRACT §3: at most 100 distinct accounts per add request. */
export const MAX_ADD_ACCOUNTS = 100;

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

export const MemberListSchema = envelope(MemberSchema, "ProjectMemberList");

export const MemberListQuery = ListQuerySchema.extend({
  role: ProjectRoleSchema.optional().openapi({
    description:
      "Only members with this project role. A cursor is valid only under the filter it was made with.",
  }),
});

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
    role: ProjectRoleSchema.default("viewer").openapi({ description: "Role given to every added account." }),
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

export const ProjectParams = idParams("project_id");
export const MemberParams = idParams("project_id", "member_id");
