/** The API key routes' record: one source, src/schemas/organization.ts. */
export { ApiKeySchema } from "../../schemas/organization";
