import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const organizationListSchema = once(() => envelope(OrganizationSchema, "OrganizationList"));

export { OrgLimitsSchema } from "../../schemas/limits";
export const OrgParams = idParams("org_id");
