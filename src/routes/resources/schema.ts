import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { StackResourceSchema } from "../../schemas/resource";

export { StackResourceSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const stackResourceListSchema = once(() => envelope(StackResourceSchema, "StackResourceList"));

export const ResourceParams = idParams("id");
export const StackResourceParams = idParams("stack_id", "id");
export const EnvironmentResourceParams = idParams("environment_id", "id");
export const StackParams = idParams("stack_id");
export const EnvironmentParams = idParams("environment_id");
