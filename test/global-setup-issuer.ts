/**
 * The tests' OpenID Connect issuer (API_CONTRACT §27), started once in Node before the Workers
 * runtime, like the webhook receiver (./global-setup-receiver.ts): scripts/lib/oidc-issuer.mjs, the
 * same issuer `npm run dev:issuer` serves, on a free port of this machine. Tests learn its origin
 * and the private keys it publishes the public halves of through `inject("oidcIssuer")`, sign their
 * tokens with jose (test/helpers/oidc.ts), and are each an issuer of their own (`<origin>/<bucket>`,
 * with the modes that make its documents misbehave: see the issuer's header).
 */
import type { TestProject } from "vitest/node";
import { type IssuerKeys, startIssuer } from "../scripts/lib/oidc-issuer.mjs";

export type { IssuerKeys };

declare module "vitest" {
  export interface ProvidedContext {
    oidcIssuer: { origin: string; keys: IssuerKeys };
  }
}

export default async function setup(project: TestProject) {
  const issuer = await startIssuer();
  project.provide("oidcIssuer", { origin: issuer.origin, keys: issuer.keys });
  return () => issuer.close();
}
