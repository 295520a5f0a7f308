import createClient, { type Client } from "openapi-fetch";
import { unwrapData } from "./errors.js";
import { type RetryOptions, retryingFetch } from "./retry.js";
import type { paths as Paths } from "./schema.js";

export type ClientOptions = RetryOptions & {
  /** e.g. `http://localhost:8787`; a trailing `/v1` is taken off (the paths start with it). */
  baseUrl: string;
};

export type DeployClient = Client<Paths>;

/** The typed client: `client.GET("/v1/projects", { params: { query: { limit: 20 } } })`. */
export function createDeployClient(options: ClientOptions): DeployClient {
  return createClient<Paths>({ baseUrl: serviceBase(options.baseUrl), fetch: retryingFetch(options) });
}

/**
 * The service's root from a URL given for it: `http://localhost:8787/v1/` → `http://localhost:8787`.
 * Every typed path begins with `/v1`, so a base that ends with it would ask for `/v1/v1/…`.
 */
export function serviceBase(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}

type Exchange = Paths["/v1/oidc/token"]["post"];
export type OidcExchangeBody = NonNullable<Exchange["requestBody"]>["content"]["application/json"];
export type IssuedApiKey = Exchange["responses"][201]["content"]["application/json"];

export type OidcExchangeOptions = {
  /** As `createDeployClient`'s. */
  baseUrl: string;
  headers?: Record<string, string>;
  fetch?: typeof globalThis.fetch;
  signal?: AbortSignal;
};

/**
 * `POST /v1/oidc/token` (API_CONTRACT §27): a CI run's OpenID Connect ID token for a short-lived
 * key, its record with the `key` shown only here. Typed by the same paths, but not sent through
 * `createDeployClient`'s fetch: that one puts a key on every request (the exchange refuses a
 * request that carries one) and retries (a token is exchanged once: a retry of one the first
 * attempt spent is refused anyway). A refusal is an `ApiError`: a `401` names the failed check.
 */
export async function exchangeOidcToken(
  options: OidcExchangeOptions,
  body: OidcExchangeBody,
): Promise<IssuedApiKey> {
  const client = createClient<Paths>({
    baseUrl: serviceBase(options.baseUrl),
    headers: options.headers,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  return unwrapData(await client.POST("/v1/oidc/token", { body, signal: options.signal }));
}
