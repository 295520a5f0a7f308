/**
 * The API key the step calls the API with: the `api-key` input, or (preferred) a short-lived key
 * the run's own GitHub ID token is exchanged for (API_CONTRACT §27), masked before anything
 * could print it.
 *
 * `POST /v1/oidc/token` takes no API key: the typed client's `exchangeOidcToken` sends none and
 * does not retry (a token is exchanged once, §27); its refusal is the client's `ApiError`, the API's
 * code and message.
 */
import * as core from "@actions/core";
import { exchangeOidcToken } from "../../../clients/typescript/src/client.js";
import type { Credentials } from "./inputs.js";

/** The runner gave no ID token: the job's permissions, most often. */
export class IdTokenError extends Error {
  override name = "IdTokenError";
}

export async function apiKeyFor(url: string, credentials: Credentials, userAgent: string): Promise<string> {
  if (credentials.kind === "api-key") return credentials.apiKey;
  let token: string;
  try {
    // Asks the runner (ACTIONS_ID_TOKEN_REQUEST_URL) for a token with this `aud`; masks it.
    token = await core.getIDToken(credentials.audience);
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^Error message: /, "").trim() : String(err);
    throw new IdTokenError(
      `no ID token from the runner (${reason}): does the job have \`permissions: id-token: write\`?`,
    );
  }
  const issued = await exchangeOidcToken(
    { baseUrl: url, headers: { "user-agent": userAgent } },
    { trust_id: credentials.trustId, token },
  );
  core.setSecret(issued.key);
  core.info(
    `exchanged the run's ID token (trust ${credentials.trustId}) for key ${issued.id}, expiring ${issued.expires_at ?? "never"}`,
  );
  return issued.key;
}
