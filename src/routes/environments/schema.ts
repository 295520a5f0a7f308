/** The environment routes' lists and parameters; the records are src/schemas/topology.ts. */
import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { ComponentSchema, EnvironmentSchema, StackSchema } from "../../schemas/topology";

export { ComponentSchema, EnvironmentSchema, StackSchema };

/** Each built by its list operations only: a read of one record builds no envelope. */
export const environmentListSchema = once(() => envelope(EnvironmentSchema, "EnvironmentList"));
export const componentListSchema = once(() => envelope(ComponentSchema, "ComponentList"));
export const stackListSchema = once(() => envelope(StackSchema, "StackList"));

export const ProjectParams = idParams("project_id");
export const EnvironmentParams = idParams("environment_id");
export const ComponentParams = idParams("component_id");
export const StackParams = idParams("stack_id");
