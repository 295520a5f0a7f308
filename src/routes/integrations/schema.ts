import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { CreatedIntegrationSchema, IntegrationSchema } from "../../schemas/integration";

export { CreatedIntegrationSchema, IntegrationSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const integrationListSchema = once(() => envelope(IntegrationSchema, "NotificationIntegrationList"));

/** One integration of a project: the path every operation on it extends. */
export const INTEGRATION_PATH = "/v1/projects/{project_id}/notification-integrations/{integration_id}";

export const ProjectParams = idParams("project_id");
export const IntegrationParams = idParams("project_id", "integration_id");
