import { envelope, ListQuerySchema } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { MemberSchema, ProjectRoleSchema } from "../../schemas/member";

export { MemberSchema };

export const MemberListSchema = envelope(MemberSchema, "ProjectMemberList");

export const MemberListQuery = ListQuerySchema.extend({
  role: ProjectRoleSchema.optional().openapi({
    description:
      "Only members with this project role. A cursor is valid only under the filter it was made with.",
  }),
});

export const ProjectParams = idParams("project_id");
export const MemberParams = idParams("project_id", "member_id");
