import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { VariableSchema } from "../../schemas/variable";

export { VariableSchema };

export const VariableListSchema = envelope(VariableSchema, "VariableList");

export const VariableParams = idParams("variable_id");
export const ComponentParams = idParams("component_id");
export const EnvironmentParams = idParams("environment_id");
