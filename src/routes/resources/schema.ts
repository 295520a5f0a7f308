import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { StackResourceSchema } from "../../schemas/resource";

export { StackResourceSchema };

export const StackResourceListSchema = envelope(StackResourceSchema, "StackResourceList");

export const ResourceParams = idParams("id");
export const StackResourceParams = idParams("stack_id", "id");
export const EnvironmentResourceParams = idParams("environment_id", "id");
export const StackParams = idParams("stack_id");
export const EnvironmentParams = idParams("environment_id");
