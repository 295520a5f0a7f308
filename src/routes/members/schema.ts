import { once } from "../../lib/once";
import { envelope, listQuery } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { MemberSchema, ProjectRoleSchema } from "../../schemas/member";

export { MemberSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const memberListSchema = once(() => envelope(MemberSchema, "ProjectMemberList"));

/** The member list's query, built with the list (a member read builds none of it). */
export const memberListQuery = once(() =>
  listQuery().extend({
    role: ProjectRoleSchema.optional().openapi({
      description:
        "Only members with this project role. A cursor is valid only under the filter it was made with.",
    }),
  }),
);

export const ProjectParams = idParams("project_id");
export const MemberParams = idParams("project_id", "member_id");
