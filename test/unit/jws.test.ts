/**
 * src/services/oidc/jws.ts against jose, which it replaces in the Worker: the same tokens and key
 * sets through both, the same outcome — the same claims, or a failure of the same name (and, for a
 * claim's, the same claim and reason), a set of several candidates yielding the same keys.
 */
import * as jose from "jose";
import { describe, expect, it } from "vitest";
import * as jws from "../../src/services/oidc/jws";

type Jwk = Record<string, unknown>;
const enc = (value: unknown) =>
  jose.base64url.encode(typeof value === "string" ? value : JSON.stringify(value));
const now = () => Math.floor(Date.now() / 1000);
const ISSUER = "https://issuer.example";
const OPTIONS = {
  algorithms: ["RS256", "ES256"],
  issuer: ISSUER,
  audience: "deploy-platform",
  clockTolerance: 60,
  requiredClaims: ["exp", "jti"],
};
const claims = (extra: Record<string, unknown> = {}) => ({
  iss: ISSUER,
  aud: "deploy-platform",
  jti: "j-1",
  iat: now(),
  nbf: now(),
  exp: now() + 300,
  ...extra,
});

async function pair(alg: "RS256" | "ES256", kid: string, options: Record<string, unknown> = {}) {
  const { publicKey, privateKey } = await jose.generateKeyPair(alg, { extractable: true, ...options });
  return { privateKey, publicJwk: { ...(await jose.exportJWK(publicKey)), kid, alg, use: "sig" } as Jwk };
}

/** A compact JWS of `header` and `payload` (text as it is, else JSON), signed by `key` for `alg`. */
async function sign(header: Record<string, unknown>, payload: unknown, key: CryptoKey, alg = "RS256") {
  const input = `${enc(header)}.${typeof payload === "string" ? payload : enc(payload)}`;
  const params = alg === "ES256" ? { name: "ECDSA", hash: "SHA-256" } : { name: "RSASSA-PKCS1-v1_5" };
  const signature = await crypto.subtle.sign(params, key, new TextEncoder().encode(input));
  return `${input}.${jose.base64url.encode(new Uint8Array(signature))}`;
}

/** What a verification came to: the claims, or the failure's name (with a claim's claim and reason). */
async function outcome(run: () => Promise<{ payload: unknown }>) {
  try {
    return { ok: (await run()).payload };
  } catch (err) {
    const e = err as Error & { claim?: string; reason?: string; [Symbol.asyncIterator]?: unknown };
    let keys: number | undefined;
    if (e[Symbol.asyncIterator]) {
      keys = 0;
      for await (const _ of e as unknown as AsyncIterable<unknown>) keys++;
    }
    return { failed: `${e.constructor.name} ${e.name}`, claim: e.claim, reason: e.reason, keys };
  }
}

const both = async (token: string, set: { keys: Jwk[] }) => {
  const theirs = await outcome(() =>
    jose.jwtVerify(token, jose.createLocalJWKSet(set as jose.JSONWebKeySet), OPTIONS),
  );
  const ours = await outcome(() =>
    jws.jwtVerify(token, jws.createLocalJWKSet(set as jws.JSONWebKeySet), OPTIONS),
  );
  return { theirs, ours };
};

describe("src/services/oidc/jws.ts, beside jose", () => {
  it("verifies and refuses as jose does: headers, signatures, payloads and claims", async () => {
    const rsa = await pair("RS256", "rsa-1");
    const ec = await pair("ES256", "ec-1");
    const set = { keys: [rsa.publicJwk, ec.publicJwk] };
    const h = { alg: "RS256", kid: "rsa-1" };
    const cases: Record<string, Promise<string>> = {
      RS256: sign(h, claims(), rsa.privateKey),
      ES256: sign({ alg: "ES256", kid: "ec-1" }, claims(), ec.privateKey, "ES256"),
      "a tampered payload": sign(h, claims(), rsa.privateKey).then((t) => {
        const [a, , c] = t.split(".");
        return `${a}.${enc(claims({ jti: "j-2" }))}.${c}`;
      }),
      "a padded header": sign(h, claims(), rsa.privateKey).then((t) => t.replace(".", "==.")),
      "crit b64 true": sign({ ...h, crit: ["b64"], b64: true }, claims(), rsa.privateKey),
      "crit b64 false": sign({ ...h, crit: ["b64"], b64: false }, JSON.stringify(claims()), rsa.privateKey),
      "crit b64 not a boolean": sign({ ...h, crit: ["b64"], b64: "yes" }, claims(), rsa.privateKey),
      "crit without its parameter": sign({ ...h, crit: ["b64"] }, claims(), rsa.privateKey),
      "crit of an unknown extension": sign({ ...h, crit: ["x-ext"], "x-ext": 1 }, claims(), rsa.privateKey),
      "crit empty": sign({ ...h, crit: [] }, claims(), rsa.privateKey),
      "crit not a list": sign({ ...h, crit: "b64" }, claims(), rsa.privateKey),
      "alg not allowed": sign({ alg: "RS384", kid: "rsa-1" }, claims(), rsa.privateKey),
      "no alg": sign({ kid: "rsa-1" }, claims(), rsa.privateKey),
      "a payload that is a list": sign(h, [1, 2], rsa.privateKey),
      "a payload that is no JSON": sign(h, enc("not json"), rsa.privateKey),
      "a payload of bad UTF-8": sign(
        h,
        jose.base64url.encode(new Uint8Array([0x7b, 0xff, 0x7d])),
        rsa.privateKey,
      ),
      "a signature that is no base64url": sign(h, claims(), rsa.privateKey).then(
        (t) => `${t.slice(0, t.lastIndexOf(".") + 1)}@@@`,
      ),
      "no iss": sign(h, claims({ iss: undefined }), rsa.privateKey),
      "no aud": sign(h, claims({ aud: undefined }), rsa.privateKey),
      "no exp and no jti": sign(h, claims({ exp: undefined, jti: undefined }), rsa.privateKey),
      "another iss": sign(h, claims({ iss: "https://other" }), rsa.privateKey),
      "an aud list holding it": sign(h, claims({ aud: ["x", "deploy-platform"] }), rsa.privateKey),
      "an aud list without it": sign(h, claims({ aud: ["x"] }), rsa.privateKey),
      "nbf ahead": sign(h, claims({ nbf: now() + 120 }), rsa.privateKey),
      "nbf within the tolerance": sign(h, claims({ nbf: now() + 30 }), rsa.privateKey),
      "exp past": sign(h, claims({ exp: now() - 120 }), rsa.privateKey),
      "exp within the tolerance": sign(h, claims({ exp: now() - 30 }), rsa.privateKey),
      "a string iat": sign(h, claims({ iat: "now" }), rsa.privateKey),
      "a string nbf": sign(h, claims({ nbf: "now" }), rsa.privateKey),
      "a string exp": sign(h, claims({ exp: "soon" }), rsa.privateKey),
      "an unknown kid": sign({ alg: "RS256", kid: "rsa-9" }, claims(), rsa.privateKey),
      "a numeric kid": sign({ alg: "RS256", kid: 5 }, claims(), rsa.privateKey),
    };
    for (const [name, made] of Object.entries(cases)) {
      const { theirs, ours } = await both(await made, set);
      expect(ours, name).toEqual(theirs);
    }
  });

  it("picks, imports and refuses a set's keys as jose does", async () => {
    const rsa = await pair("RS256", "rsa-1");
    const other = await pair("RS256", "rsa-2");
    const ec = await pair("ES256", "ec-1");
    const p384 = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-384" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const p384Jwk = { ...(await jose.exportJWK(p384.publicKey)), kid: "ec-384" };
    // A 1024-bit RSA key, which jose will not make (test/global-setup-issuer.ts makes its own so).
    const shortPair = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const short = {
      publicJwk: { ...(await jose.exportJWK(shortPair.publicKey)), kid: "short", alg: "RS256" },
    };
    const token = (kid?: string) => sign({ alg: "RS256", ...(kid ? { kid } : {}) }, claims(), rsa.privateKey);
    const privateJwk = { ...(await jose.exportJWK(rsa.privateKey)), kid: "rsa-1" };
    const sets: Record<string, [Jwk[], string | undefined]> = {
      "its key": [[rsa.publicJwk], "rsa-1"],
      "no kid, two keys of its alg": [[other.publicJwk, rsa.publicJwk], undefined],
      "no kid, one key of another alg": [[ec.publicJwk, rsa.publicJwk], undefined],
      "no kid, a short key and its own": [[short.publicJwk, rsa.publicJwk], undefined],
      "no kid, short keys only": [[short.publicJwk, { ...short.publicJwk, kid: "short-2" }], undefined],
      "a short key of its kid": [[{ ...short.publicJwk, kid: "rsa-1" }], "rsa-1"],
      "use enc": [[{ ...rsa.publicJwk, use: "enc" }], "rsa-1"],
      "another alg named": [[{ ...rsa.publicJwk, alg: "RS384" }], "rsa-1"],
      "key_ops sign": [[{ ...rsa.publicJwk, key_ops: ["sign"] }], "rsa-1"],
      "key_ops verify": [[{ ...rsa.publicJwk, key_ops: ["verify"] }], "rsa-1"],
      "key_ops repeated": [[{ ...rsa.publicJwk, key_ops: ["verify", "verify"] }], "rsa-1"],
      "ext not a boolean": [[{ ...rsa.publicJwk, ext: "yes" }], "rsa-1"],
      "a private key": [[privateJwk], "rsa-1"],
      "a broken modulus": [[{ ...rsa.publicJwk, n: "AQAB" }], "rsa-1"],
      "an EC key of P-384": [[p384Jwk], undefined],
      "no keys": [[], "rsa-1"],
    };
    for (const [name, [keys, kid]] of Object.entries(sets)) {
      const { theirs, ours } = await both(await token(kid), { keys });
      expect(ours, name).toEqual(theirs);
    }
    for (const set of [{ keys: "no" }, { keys: [1] }, [], null]) {
      const theirs = await outcome(async () => ({ payload: jose.createLocalJWKSet(set as never) }));
      const ours = await outcome(async () => ({ payload: jws.createLocalJWKSet(set as never) }));
      expect(ours.failed, JSON.stringify(set)).toBe(theirs.failed);
    }
  });

  it("reads a protected header as jose's decodeProtectedHeader does", () => {
    for (const token of [
      `${enc({ alg: "RS256" })}.e30.c2ln`,
      `${enc({ alg: "RS256" })}==.e30.c2ln`,
      `${enc([1])}.e30.c2ln`,
      `${enc("not json")}.e30.c2ln`,
      `${jose.base64url.encode(new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))}.e30.c2ln`,
      ".e30.c2ln",
      "a.b",
    ]) {
      const read = (decode: (t: string) => unknown) => {
        try {
          return { ok: decode(token) };
        } catch (err) {
          return { failed: `${(err as Error).constructor.name} ${(err as Error).name}` };
        }
      };
      expect(read(jws.decodeProtectedHeader), token).toEqual(read(jose.decodeProtectedHeader));
    }
  });
});
