/** The OpenID Connect trust routes' records, lists and parameters: one source, src/schemas/oidc.ts (the bodies: oidc-writes.ts). */
import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { OidcTrustSchema } from "../../schemas/oidc";

export { OidcTrustSchema } from "../../schemas/oidc";

/** Built by the list operations only: a read of one record builds no envelope. */
export const oidcTrustListSchema = once(() => envelope(OidcTrustSchema, "OidcTrustList"));
export const OidcTrustParams = idParams("id");
