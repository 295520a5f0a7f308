import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { VariableSchema } from "../../schemas/variable";
import { VariableVersionSchema } from "../../schemas/variable-set";

export { VariableSchema };

export const VariableListSchema = envelope(VariableSchema, "VariableList");
export const VariableVersionListSchema = envelope(VariableVersionSchema, "VariableVersionList");

export const VariableParams = idParams("variable_id");
export const ComponentParams = idParams("component_id");
export const EnvironmentParams = idParams("environment_id");
