// A local OpenID Connect issuer over http on this machine: the one `npm run dev:issuer` serves
// (scripts/dev-issuer.mjs, for trying `deploy-platform login --oidc` and the token exchange of
// API_CONTRACT §27 against `npm run dev`), the one the tests start before the Workers runtime
// (test/global-setup-issuer.ts), and the one scripts/check-action.mjs and check-cli.mjs run the
// GitHub Action and the CLI against. Its keys (RS256 `rsa-1`, `rsa-2`; ES256 `ec-1`) are made
// when it starts and live as long as it does.
//
//   GET  /.well-known/openid-configuration  {issuer: <origin>, jwks_uri: <origin>/jwks}
//   GET  /jwks                              the public keys `rsa-1` and `ec-1`
//   POST /token {claims?, audience?, ttl?, key?}
//                                           {token}: an ID token of <origin> with the claims named
//                                           (iss, aud, iat, nbf, exp and jti filled in unless named)
//   GET  /id-token?audience=…               a GitHub Actions runner's ID-token endpoint (bearer: the
//                                           request token, `env` below): {count, value}, claims as a
//                                           push to acme/storefront's main branch
//   POST /stop                              ends the server, when it was started with `onStop`
//
// Every other first path segment is an issuer of its own, `<origin>/<bucket>` (each test one, so
// files running at once never share an issuer, nor the Worker's cache of one), with modes that
// make its two documents misbehave and a log of what was asked of it:
//
//   GET  /<bucket>/.well-known/openid-configuration, /<bucket>/jwks    as above, for <origin>/<bucket>
//   POST /modes/<bucket>  {discovery?, jwks?}                          how they answer from now on
//   GET  /requests/<bucket>                                            the paths asked for, oldest first
//
// Modes: `ok` (the default); `slow` (answers after 20 s); `garbage` (200, not JSON); `error` (500);
// discovery only: `other-issuer` (names another issuer), `minimal` (`jwks_uri` alone, no `issuer`),
// `huge` (a 1 MiB document); key set only: `rotated` (publishes `rsa-2` too), `invalid` (JSON that is
// no JWK set), `crowded` (16 other ES256 keys before `ec-1`), `legacy` (a 1024-bit RSA key, unfit
// for RS256, before `rsa-1`), `unfit` (two such keys and `ec-1`: no RS256 key that can verify).
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";

const SLOW_MS = 20_000;
/** Routes of the server itself; any other first segment is a bucket. */
const RESERVED = new Set(["modes", "requests", "token", "id-token", "stop"]);

async function pair(alg, kid) {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const common = { kid, alg, use: "sig" };
  return {
    alg,
    publicJwk: { ...(await exportJWK(publicKey)), ...common },
    privateJwk: { ...(await exportJWK(privateKey)), ...common },
  };
}

/** An RSA key of 1024 bits (jose makes none under 2048; WebCrypto does): its public JWK. */
async function shortKey(kid) {
  const { publicKey } = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 1024,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  return { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" };
}

/** An ID token of `issuer`, signed with `key`: the claims given, the required ones filled in. */
async function sign(issuer, key, { claims = {}, audience = "deploy-platform", ttl = 300 }) {
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: issuer,
    aud: audience,
    iat: now,
    nbf: now,
    exp: now + ttl,
    jti: randomUUID(),
    ...claims,
  };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.alg, kid: key.privateJwk.kid, typ: "JWT" })
    .sign(await importJWK(key.privateJwk, key.alg));
}

const readBody = (req) =>
  new Promise((resolve) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

/**
 * Starts the issuer on `host`:`port` (0: a free port); with `onStop`, `POST /stop` calls it (how
 * `npm run dev:issuer -- stop` ends a server started in the background). Resolves with its `origin`, the private
 * keys whose public halves it publishes, the runner's `env` (ACTIONS_ID_TOKEN_REQUEST_URL and
 * _TOKEN, as a job with `id-token: write` has them), what the runner endpoint was `asked`, and
 * `close()`. Rejects when the port is taken.
 */
export async function startIssuer({ host = "127.0.0.1", port = 0, onStop } = {}) {
  const keys = {
    "rsa-1": await pair("RS256", "rsa-1"),
    "rsa-2": await pair("RS256", "rsa-2"),
    "ec-1": await pair("ES256", "ec-1"),
  };
  const legacy = [await shortKey("legacy"), await shortKey("legacy-2")];
  const decoys = await Promise.all(
    Array.from({ length: 16 }, async (_, i) => (await pair("ES256", `decoy-${i}`)).publicJwk),
  );
  const requestToken = randomUUID();
  const modes = new Map();
  const requests = new Map();
  const asked = [];
  let origin = "";

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://issuer");
    const json = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const segments = url.pathname.split("/").slice(1);
    const [first = "", second = ""] = segments;

    if (req.method === "POST" && first === "modes") {
      const text = await readBody(req);
      modes.set(second, { ...modes.get(second), ...JSON.parse(text || "{}") });
      return json(200, modes.get(second));
    }
    if (req.method === "GET" && first === "requests") return json(200, requests.get(second) ?? []);
    if (req.method === "POST" && first === "stop" && onStop) {
      res.writeHead(204).end();
      return onStop();
    }
    if (req.method === "POST" && first === "token") {
      let asked;
      try {
        asked = JSON.parse((await readBody(req)) || "{}");
      } catch {
        return json(400, { message: "the body is not JSON" });
      }
      const key = keys[asked.key ?? "rsa-1"];
      if (!key) return json(400, { message: `no key ${asked.key}: rsa-1, rsa-2 or ec-1` });
      return json(200, { token: await sign(origin, key, asked) });
    }
    if (first === "id-token") {
      const audience = url.searchParams.get("audience");
      asked.push({ audience, authorization: req.headers.authorization ?? null });
      // An auth scheme's name is case-insensitive (RFC 9110 §11.1).
      const [scheme, credentials] = (req.headers.authorization ?? "").split(" ");
      if (scheme?.toLowerCase() !== "bearer" || credentials !== requestToken)
        return json(401, { message: "bad token" });
      const claims = {
        sub: "repo:acme/storefront:ref:refs/heads/main",
        repository: "acme/storefront",
        ref: "refs/heads/main",
        run_id: "4242",
      };
      const value = await sign(origin, keys["rsa-1"], { claims, audience: audience ?? origin });
      return json(200, { count: 1, value });
    }

    // An issuer's two documents: the root's (no bucket), or a bucket's.
    const atRoot = first === ".well-known" || first === "jwks";
    const bucket = atRoot ? "" : first;
    const path = (atRoot ? segments : segments.slice(1)).join("/");
    if (!atRoot && RESERVED.has(bucket)) return json(404, { message: "not here" });
    requests.set(bucket, [...(requests.get(bucket) ?? []), `/${path}`]);
    const issuer = bucket ? `${origin}/${bucket}` : origin;
    const mode = modes.get(bucket) ?? {};
    const answer = (which, body) => {
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
        id_token_signing_alg_values_supported: ["RS256", "ES256"],
      }));
    }
    if (path === "jwks") {
      if (mode.jwks === "invalid") return json(200, { keys: "not a list" });
      const [rsa1, rsa2, ec1] = [keys["rsa-1"].publicJwk, keys["rsa-2"].publicJwk, keys["ec-1"].publicJwk];
      const published = {
        crowded: [rsa1, ...decoys, ec1],
        legacy: [legacy[0], rsa1, ec1],
        unfit: [...legacy, ec1],
        rotated: [rsa1, ec1, rsa2],
      };
      return answer(mode.jwks, () => ({ keys: published[mode.jwks] ?? [rsa1, ec1] }));
    }
    json(404, { message: "no such document" });
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  origin = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
  return {
    origin,
    keys: Object.fromEntries(
      Object.entries(keys).map(([kid, k]) => [kid, { alg: k.alg, privateJwk: k.privateJwk }]),
    ),
    env: {
      ACTIONS_ID_TOKEN_REQUEST_URL: `${origin}/id-token?api-version=2.0`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: requestToken,
    },
    asked,
    close: () =>
      new Promise((resolve) => {
        // A `slow` answer may still be pending: end it rather than wait for it.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
