/** The bodies that add project members and replace one (API_CONTRACT §3), and what an add answers. */
import * as z from "zod";
import { echoedReadOnlyFields, IdSchema } from "../openapi/primitives";
import { MAX_ADD_ACCOUNTS, MemberSchema, ProjectRoleSchema } from "./member";

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
        uniqueItems: true,
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
