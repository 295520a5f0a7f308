/**
 * OpenID Connect (API_CONTRACT §27) for the tests: an issuer of the test's own on the local issuer
 * server (test/global-setup-issuer.ts), ID tokens signed with its keys by jose, trusts made through
 * the public API, and the exchange.
 */
import { importJWK, type JWTPayload, SignJWT } from "jose";
import { inject } from "vitest";
import type { OidcTrustRecord } from "../../src/schemas/oidc";
import type { NewApiKeyRecord } from "../../src/schemas/organization";
import type { IssuerKeys } from "../global-setup-issuer";
import { type ApiResponse, type RequestOptions, request } from "./api";
import type { ErrorBody } from "./expect";
import { type Caller, unique } from "./factories";

export const issuerServer = () => inject("oidcIssuer");

/** A fresh issuer of the test's own (its own documents, modes, request log and cache entry). */
export function newIssuer(): string {
  return `${issuerServer().origin}/${unique("iss")}`;
}

const bucketOf = (issuer: string) => issuer.slice(issuerServer().origin.length + 1);

/** How the issuer's discovery document and key set answer from now on (test/global-setup-issuer.ts). */
export async function setIssuerModes(issuer: string, modes: { discovery?: string; jwks?: string }) {
  const res = await fetch(`${issuerServer().origin}/modes/${bucketOf(issuer)}`, {
    method: "POST",
    body: JSON.stringify(modes),
  });
  if (!res.ok) throw new Error(`issuer modes → ${res.status}`);
}

/** The paths the Worker asked the issuer for, oldest first. */
export async function issuerRequests(issuer: string): Promise<string[]> {
  const res = await fetch(`${issuerServer().origin}/requests/${bucketOf(issuer)}`);
  return (await res.json()) as string[];
}

export type KeyId = keyof IssuerKeys;

/** Claims a GitHub Actions token carries, for `issuer` and `audience`, valid now for 5 minutes. */
export function claimsFor(issuer: string, audience: string, extra: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: issuer,
    aud: audience,
    sub: "repo:acme/storefront:ref:refs/heads/main",
    repository: "acme/storefront",
    ref: "refs/heads/main",
    run_id: "1234567890",
    jti: crypto.randomUUID(),
    iat: now,
    nbf: now,
    exp: now + 300,
    ...extra,
  };
}

/** A token signed by the issuer's key `kid` (`header` adds to or overrides the protected header). */
export async function signToken(
  claims: JWTPayload,
  kid: KeyId = "rsa-1",
  header: Record<string, unknown> = {},
): Promise<string> {
  const { alg, privateJwk } = issuerServer().keys[kid];
  const key = await importJWK(privateJwk, alg);
  return new SignJWT(claims).setProtectedHeader({ alg, kid, typ: "JWT", ...header }).sign(key);
}

export const DEFAULT_CONDITIONS = { repository: "acme/storefront", ref: "refs/heads/*" };

/** The body of a trust of `issuer`, with `fields` over the defaults. */
export function trustBody(issuer: string, fields: Record<string, unknown> = {}) {
  return {
    name: unique("trust"),
    issuer,
    audience: "deploy-platform",
    conditions: DEFAULT_CONDITIONS,
    ...fields,
  };
}

/** A trust made by `caller` through `POST /v1/oidc-trusts`; throws unless it is created. */
export async function createTrust(
  caller: Caller,
  issuer: string = newIssuer(),
  fields: Record<string, unknown> = {},
): Promise<OidcTrustRecord> {
  const res = await request<OidcTrustRecord>("POST", "/v1/oidc-trusts", {
    key: caller.key,
    body: trustBody(issuer, fields),
  });
  if (res.status !== 201) throw new Error(`create trust → ${res.status} ${res.raw}`);
  return res.body;
}

/** `POST /v1/oidc/token`, without a key (unless `options` sends one). */
export function exchange(
  trustId: string,
  token: string,
  options: RequestOptions = {},
): Promise<ApiResponse<NewApiKeyRecord & ErrorBody>> {
  return request<NewApiKeyRecord & ErrorBody>("POST", "/v1/oidc/token", {
    ...options,
    body: options.body ?? { trust_id: trustId, token },
  });
}

/** An exchange that must answer a key. */
export async function exchangeOk(trustId: string, token: string): Promise<NewApiKeyRecord> {
  const res = await exchange(trustId, token);
  if (res.status !== 201) throw new Error(`exchange → ${res.status} ${res.raw}`);
  return res.body;
}

/** A trust of a fresh issuer by `caller`, and a valid token for it. */
export async function trustAndToken(caller: Caller, fields: Record<string, unknown> = {}) {
  const issuer = newIssuer();
  const trust = await createTrust(caller, issuer, fields);
  const token = await signToken(claimsFor(issuer, trust.audience));
  return { issuer, trust, token };
}
