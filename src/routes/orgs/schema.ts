import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const organizationListSchema = once(() => envelope(OrganizationSchema, "OrganizationList"));
