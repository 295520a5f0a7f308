/** The API key routes' records, lists and parameters: one source, src/schemas/organization.ts (the bodies: organization-writes.ts). */

import { once } from "../../lib/once";
import { envelope, listQuery } from "../../openapi/lists";
import { InlineIdSchema, idParams } from "../../openapi/primitives";
import { ApiKeySchema } from "../../schemas/organization";

export { ApiKeySchema, CurrentApiKeySchema, NewApiKeySchema } from "../../schemas/organization";

/** Built by the list operations only: a read of one record builds no envelope. */
export const apiKeyListSchema = once(() => envelope(ApiKeySchema, "ApiKeyList"));
export const ApiKeyParams = idParams("id");

/** The key list's query, built with the list (a key read builds none of it). */
export const apiKeyListQuery = once(() =>
  listQuery().extend({
    account_id: InlineIdSchema.optional().openapi({ description: "Only the keys acting as this account." }),
  }),
);
