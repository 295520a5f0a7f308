import { envelope } from "../../openapi/lists";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");
