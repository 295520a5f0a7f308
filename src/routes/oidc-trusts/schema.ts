/** The OpenID Connect trust routes' records, lists and parameters: one source, src/schemas/oidc.ts (the bodies: oidc-writes.ts). */
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { OidcTrustSchema } from "../../schemas/oidc";

export { OidcTrustSchema } from "../../schemas/oidc";

export const OidcTrustListSchema = envelope(OidcTrustSchema, "OidcTrustList");
export const OidcTrustParams = idParams("id");
