import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { ProjectSchema } from "../../schemas/project";

export { ProjectSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const projectListSchema = once(() => envelope(ProjectSchema, "ProjectList"));

export const ProjectParams = idParams("project_id");
export const OrgParams = idParams("org_id");
