// Types of ./oidc-issuer.mjs for the TypeScript that imports it (test/global-setup-issuer.ts).
import type { JWK } from "jose";

export type IssuerKeyId = "rsa-1" | "rsa-2" | "ec-1";
export type IssuerKeys = Record<IssuerKeyId, { alg: "RS256" | "ES256"; privateJwk: JWK }>;

export type Issuer = {
  /** `http://127.0.0.1:<port>`: the root issuer; `<origin>/<bucket>` is an issuer of its own. */
  origin: string;
  /** The private keys whose public halves the issuer publishes. */
  keys: IssuerKeys;
  /** A GitHub Actions runner's ID-token request variables, pointing at this issuer. */
  env: { ACTIONS_ID_TOKEN_REQUEST_URL: string; ACTIONS_ID_TOKEN_REQUEST_TOKEN: string };
  /** What the runner's ID-token endpoint was asked, oldest first. */
  asked: Array<{ audience: string | null; authorization: string | null }>;
  close(): Promise<void>;
};

export function startIssuer(options?: { host?: string; port?: number; onStop?: () => void }): Promise<Issuer>;
