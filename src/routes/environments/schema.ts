/** The environment routes' lists and parameters; the records are src/schemas/topology.ts. */
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { ComponentSchema, EnvironmentSchema, StackSchema } from "../../schemas/topology";

export { ComponentSchema, EnvironmentSchema, StackSchema };

export const EnvironmentListSchema = envelope(EnvironmentSchema, "EnvironmentList");
export const ComponentListSchema = envelope(ComponentSchema, "ComponentList");
export const StackListSchema = envelope(StackSchema, "StackList");

export const ProjectParams = idParams("project_id");
export const EnvironmentParams = idParams("environment_id");
export const ComponentParams = idParams("component_id");
export const StackParams = idParams("stack_id");
