import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { VariableSchema } from "../../schemas/variable";

export { VariableSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const variableListSchema = once(() => envelope(VariableSchema, "VariableList"));

export const VariableParams = idParams("variable_id");
export const ComponentParams = idParams("component_id");
export const EnvironmentParams = idParams("environment_id");
