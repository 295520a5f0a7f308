import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { ProjectSchema } from "../../schemas/project";

export { ProjectSchema };

export const ProjectListSchema = envelope(ProjectSchema, "ProjectList");

export const ProjectParams = idParams("project_id");
export const OrgParams = idParams("org_id");
