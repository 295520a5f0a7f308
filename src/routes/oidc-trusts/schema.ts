/** The OpenID Connect trust routes' records and bodies: one source, src/schemas/oidc.ts. */
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { OidcTrustSchema } from "../../schemas/oidc";

export { OidcTrustCreateBody, OidcTrustSchema } from "../../schemas/oidc";

export const OidcTrustListSchema = envelope(OidcTrustSchema, "OidcTrustList");
export const OidcTrustParams = idParams("id");
