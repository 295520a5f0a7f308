/**
 * A real local OpenID Connect issuer for the token exchange's tests (API_CONTRACT §27), started
 * once in Node before the Workers runtime, like the webhook receiver (./global-setup-receiver.ts):
 * a discovery document and a key set over HTTP, no network beyond this machine. Tests learn its
 * origin and the private keys it publishes the public halves of through `inject("oidcIssuer")`,
 * and sign their tokens with jose (test/helpers/oidc.ts).
 *
 * Every test is an issuer of its own, `<origin>/<bucket>`, so files running at once never share
 * an issuer (nor the Worker's cache of one):
 *
 *   GET  /<bucket>/.well-known/openid-configuration   {issuer: <origin>/<bucket>, jwks_uri: <origin>/<bucket>/jwks}
 *   GET  /<bucket>/jwks                                the public keys `rsa-1` and `ec-1` (and `rsa-2` when rotated)
 *   POST /modes/<bucket>  {discovery?, jwks?}          how the bucket's two documents misbehave (below)
 *   GET  /requests/<bucket>                            the paths the bucket was asked for, oldest first
 *
 * Modes: `ok` (the default); `slow` (answers after 20 s); `garbage` (200, not JSON); `error` (500);
 * discovery only: `other-issuer` (names another issuer), `minimal` (`jwks_uri` alone, no `issuer`),
 * `huge` (a 1 MiB document); key set only:
 * `rotated` (publishes `rsa-2` too), `invalid` (JSON that is no JWK set), `crowded` (16 other ES256
 * keys before `ec-1`), `legacy` (a 1024-bit RSA key, unfit for RS256, before `rsa-1`), `unfit`
 * (two such keys and `ec-1`: no RS256 key that can verify).
 * (Node's types are not part of this project's type check, so the few used are declared here.)
 */
import type { JWK } from "jose";
import type { TestProject } from "vitest/node";

export type IssuerKeys = Record<"rsa-1" | "rsa-2" | "ec-1", { alg: "RS256" | "ES256"; privateJwk: JWK }>;

declare module "vitest" {
  export interface ProvidedContext {
    oidcIssuer: { origin: string; keys: IssuerKeys };
  }
}

type IncomingRequest = {
  method?: string;
  url?: string;
  on(event: "data", listener: (chunk: Uint8Array) => void): void;
  on(event: "end", listener: () => void): void;
};
type ServerResponse = {
  writeHead(status: number, headers: Record<string, string>): void;
  end(body?: string): void;
};
type Server = {
  listen(port: number, host: string, callback: () => void): void;
  address(): { port: number } | string | null;
  close(callback: () => void): void;
  closeAllConnections(): void;
};
type NodeHttp = { createServer(handler: (req: IncomingRequest, res: ServerResponse) => void): Server };

type Modes = { discovery?: string; jwks?: string };

const SLOW_MS = 20_000;

export default async function setup(project: TestProject) {
  const http = (await import("node:http" as string)) as NodeHttp;
  const jose = await import("jose");
  const pair = async (alg: "RS256" | "ES256", kid: string) => {
    const { publicKey, privateKey } = await jose.generateKeyPair(alg, { extractable: true });
    const common = { kid, alg, use: "sig" };
    return {
      publicJwk: { ...(await jose.exportJWK(publicKey)), ...common },
      privateJwk: { ...(await jose.exportJWK(privateKey)), ...common },
      alg,
    };
  };
  const rsa1 = await pair("RS256", "rsa-1");
  const rsa2 = await pair("RS256", "rsa-2");
  const ec1 = await pair("ES256", "ec-1");
  // jose makes no RSA key under 2048 bits; WebCrypto does.
  const shortKey = async (kid: string) => {
    const { publicKey } = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as { publicKey: CryptoKey };
    return { ...(await jose.exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
  };
  const legacy = await shortKey("legacy");
  const legacy2 = await shortKey("legacy-2");
  const decoys = await Promise.all(
    Array.from({ length: 16 }, async (_, i) => (await pair("ES256", `decoy-${i}`)).publicJwk),
  );

  const modes = new Map<string, Modes>();
  const requests = new Map<string, string[]>();
  let origin = "";

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://issuer");
    const [, first = "", second = "", ...rest] = url.pathname.split("/");
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "POST" && first === "modes") {
      const chunks: Uint8Array[] = [];
      req.on("data", (chunk) => chunks.push(chunk));
      req.on("end", () => {
        const text = chunks.map((c) => new TextDecoder().decode(c)).join("");
        modes.set(second, { ...modes.get(second), ...(JSON.parse(text || "{}") as Modes) });
        json(200, modes.get(second));
      });
      return;
    }
    if (req.method === "GET" && first === "requests") return json(200, requests.get(second) ?? []);

    const bucket = first;
    const path = [second, ...rest].join("/");
    requests.set(bucket, [...(requests.get(bucket) ?? []), `/${path}`]);
    const issuer = `${origin}/${bucket}`;
    const mode = modes.get(bucket) ?? {};
    const answer = (which: string | undefined, body: () => unknown) => {
      switch (which ?? "ok") {
        case "slow":
          setTimeout(() => json(200, body()), SLOW_MS);
          return;
        case "garbage":
          res.writeHead(200, { "content-type": "application/json" });
          res.end("<html>surely not json");
          return;
        case "error":
          return json(500, { error: "down" });
        default:
          return json(200, body());
      }
    };
    if (path === ".well-known/openid-configuration") {
      if (mode.discovery === "other-issuer")
        return json(200, { issuer: `${issuer}-other`, jwks_uri: `${issuer}/jwks` });
      if (mode.discovery === "minimal") return json(200, { jwks_uri: `${issuer}/jwks` });
      if (mode.discovery === "huge")
        return json(200, { issuer, jwks_uri: `${issuer}/jwks`, pad: "x".repeat(1 << 20) });
      return answer(mode.discovery, () => ({
        issuer,
        jwks_uri: `${issuer}/jwks`,
        id_token_signing_alg_values_supported: ["RS256"],
      }));
    }
    if (path === "jwks") {
      if (mode.jwks === "invalid") return json(200, { keys: "not a list" });
      const keys =
        mode.jwks === "crowded"
          ? [rsa1.publicJwk, ...decoys, ec1.publicJwk]
          : mode.jwks === "legacy"
            ? [legacy, rsa1.publicJwk, ec1.publicJwk]
            : mode.jwks === "unfit"
              ? [legacy, legacy2, ec1.publicJwk]
              : [rsa1.publicJwk, ec1.publicJwk, ...(mode.jwks === "rotated" ? [rsa2.publicJwk] : [])];
      return answer(mode.jwks, () => ({ keys }));
    }
    json(404, { error: "no such document" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the OpenID Connect issuer has no port");
  origin = `http://127.0.0.1:${address.port}`;
  project.provide("oidcIssuer", {
    origin,
    keys: {
      "rsa-1": { alg: "RS256", privateJwk: rsa1.privateJwk },
      "rsa-2": { alg: "RS256", privateJwk: rsa2.privateJwk },
      "ec-1": { alg: "ES256", privateJwk: ec1.privateJwk },
    },
  });
  return () =>
    new Promise<void>((resolve) => {
      // A `slow` answer may still be pending: end it rather than wait for it.
      server.closeAllConnections();
      server.close(() => resolve());
    });
}
