/** The internal API's path parameters (API_CONTRACT §9); its bodies are in src/schemas/. */
import { idParams } from "../../openapi/primitives";

export const OrgIdParams = idParams("org_id");
export const ProjectIdParams = idParams("project_id");
export const EnvironmentIdParams = idParams("environment_id");
export const StackIdParams = idParams("stack_id");
export const IdParams = idParams("id");
