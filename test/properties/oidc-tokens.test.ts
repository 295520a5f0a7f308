/**
 * The checks of `POST /v1/oidc/token` (API_CONTRACT §27), one bad or hostile token at a time,
 * against a real issuer on this machine (test/global-setup-issuer.ts): each is `401
 * unauthenticated` whose message names the check that failed, and no key is made.
 */
import { env } from "cloudflare:test";
import { base64url, exportJWK, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { request } from "../helpers/api";
import { expectError } from "../helpers/expect";
import { createOrgWithOwner, unique } from "../helpers/factories";
import {
  claimsFor,
  exchange,
  exchangeOk,
  issuerRequests,
  issuerServer,
  setIssuerModes,
  signToken,
  trustAndToken,
} from "../helpers/oidc";

const now = () => Math.floor(Date.now() / 1000);

/** A trust of a fresh issuer, and a function that exchanges a token made from its claims. */
async function world(fields: Record<string, unknown> = {}) {
  const { owner } = await createOrgWithOwner();
  const { issuer, trust } = await trustAndToken(owner, fields);
  const claims = (extra: JWTPayload = {}) => claimsFor(issuer, trust.audience, extra);
  const refused = async (token: string, message: RegExp) => {
    const before = await keyCount(owner.orgId);
    const res = await exchange(trust.id, token);
    const body = expectError(res, 401, "unauthenticated");
    expect(body.message).toMatch(message);
    expect(body.cause).toBeUndefined();
    expect(await keyCount(owner.orgId)).toBe(before);
    return body;
  };
  return { owner, issuer, trust, claims, refused };
}

const keyCount = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE org_id = ?")
      .bind(orgId)
      .first<{ n: number }>()
  )?.n ?? 0;

/** `header.payload.signature` from parts of the test's own making (only for tokens jose will not make). */
const assemble = (header: unknown, payload: unknown, signature = "c2ln") =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.${signature}`;

describe("the token's form and algorithm", () => {
  it("refuses alg none, before the issuer is asked", async () => {
    const w = await world();
    const token = new UnsecuredJWT(w.claims()).encode();
    await w.refused(token, /`alg` must be RS256 or ES256/);
    expect(await issuerRequests(w.issuer)).toEqual([]);
  });

  it("refuses HS256 keyed with the issuer's public key (key confusion), before the issuer is asked", async () => {
    const w = await world();
    const publicJwk = { ...issuerServer().keys["rsa-1"].privateJwk };
    for (const field of ["d", "p", "q", "dp", "dq", "qi"])
      delete (publicJwk as Record<string, unknown>)[field];
    const secret = new TextEncoder().encode(JSON.stringify(publicJwk));
    const token = await new SignJWT(w.claims())
      .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
      .sign(secret);
    await w.refused(token, /`alg` must be RS256 or ES256/);
    expect(await issuerRequests(w.issuer)).toEqual([]);
  });

  it("refuses RS384, PS256 and ES512 alike", async () => {
    const w = await world();
    for (const alg of ["RS384", "PS256", "ES512"]) {
      await w.refused(assemble({ alg, kid: "rsa-1" }, w.claims()), /`alg` must be RS256 or ES256/);
    }
  });

  it("refuses what is not a compact JWT", async () => {
    const w = await world();
    await w.refused("abc.def", /not a JWT/);
    await w.refused("abc.def.ghi.jkl", /not a JWT/);
    await w.refused("bm90IGpzb24.e30.c2ln", /header is not a base64url JSON object/);
    await w.refused(`${base64url.encode("[1,2]")}.e30.c2ln`, /header is not a base64url JSON object/);
  });

  it("refuses a huge header and a deeply nested one unread", async () => {
    const w = await world();
    const huge = await signToken(w.claims(), "rsa-1", { pad: "x".repeat(8000) });
    await w.refused(huge, /header is longer than 2048 characters/);
    let nested: unknown = "bottom";
    for (let i = 0; i < 3000; i++) nested = [nested];
    const deep = assemble({ alg: "RS256", kid: "rsa-1", x: nested }, w.claims());
    await w.refused(deep, /header is longer than/);
    // Nested within the size: read, and refused by its signature (its issuer signed no such token).
    let shallow: unknown = 1;
    for (let i = 0; i < 200; i++) shallow = { a: shallow };
    await w.refused(
      assemble({ alg: "RS256", kid: "rsa-1", x: shallow }, w.claims()),
      /signature does not verify/,
    );
  });

  it("refuses a header extension it must understand (`crit`) and does not, naming that check", async () => {
    const w = await world();
    await w.refused(
      assemble({ alg: "RS256", kid: "rsa-1", crit: ["x-ext"], "x-ext": 1 }, w.claims()),
      /`crit`/,
    );
  });

  it("refuses a token whose signature does not verify", async () => {
    const w = await world();
    const [header, , signature] = (await signToken(w.claims())).split(".");
    const forged = `${header}.${base64url.encode(JSON.stringify(w.claims({ repository: "acme/storefront" })))}.${signature}`;
    await w.refused(forged, /signature does not verify/);
  });
});

describe("the issuer's keys only", () => {
  it("never fetches a jku or x5u the token names; a key of the token's own choosing does not verify", async () => {
    const w = await world();
    const attacker = await generateKeyPair("RS256", { extractable: true });
    const jwk = { ...(await exportJWK(attacker.publicKey)), kid: "attacker", alg: "RS256" };
    const bucket = unique("jku");
    const elsewhere = `${inject("receiverOrigin")}/hooks/${bucket}`;
    const token = await new SignJWT(w.claims())
      .setProtectedHeader({ alg: "RS256", kid: "attacker", jku: elsewhere, x5u: elsewhere, jwk })
      .sign(attacker.privateKey);
    await w.refused(token, /No key of the issuer's key set matches/);
    const received = await fetch(`${inject("receiverOrigin")}/received/${bucket}`);
    expect(await received.json()).toEqual([]);
    // The issuer's own key with a jku header: the header is ignored, the token is good.
    const fine = await signToken(w.claims(), "rsa-1", { jku: elsewhere });
    expect((await exchange(w.trust.id, fine)).status).toBe(201);
    expect(await (await fetch(`${inject("receiverOrigin")}/received/${bucket}`)).json()).toEqual([]);
  });

  it("an unknown kid refetches the key set: a key rotated in after the set was cached is picked up at once", async () => {
    const w = await world();
    await exchangeOk(w.trust.id, await signToken(w.claims()));
    expect(await issuerRequests(w.issuer)).toEqual(["/.well-known/openid-configuration", "/jwks"]);
    await setIssuerModes(w.issuer, { jwks: "rotated" });
    await exchangeOk(w.trust.id, await signToken(w.claims(), "rsa-2"));
    expect(await issuerRequests(w.issuer)).toEqual(["/.well-known/openid-configuration", "/jwks", "/jwks"]);
    // Both keys are in the set now: no request for either.
    await exchangeOk(w.trust.id, await signToken(w.claims(), "rsa-1"));
    await exchangeOk(w.trust.id, await signToken(w.claims(), "rsa-2"));
    expect(await issuerRequests(w.issuer)).toHaveLength(3);
  });

  it("an unknown kid refetches at most once a minute per issuer", async () => {
    const w = await world();
    await exchangeOk(w.trust.id, await signToken(w.claims()));
    // `rsa-2` is not published yet: its first token refetches the set, and is refused.
    await w.refused(
      await signToken(w.claims(), "rsa-2"),
      /No key of the issuer's key set matches the token's `kid`/,
    );
    expect(await issuerRequests(w.issuer)).toEqual(["/.well-known/openid-configuration", "/jwks", "/jwks"]);
    // Within the minute, nothing more reaches the issuer: not a stream of unknown kids, not the
    // key published since.
    await setIssuerModes(w.issuer, { jwks: "rotated" });
    for (let i = 0; i < 3; i++) {
      await w.refused(await signToken(w.claims(), "rsa-2"), /No key of the issuer's key set matches/);
    }
    expect(await issuerRequests(w.issuer)).toHaveLength(3);
  });

  it("a token that names no kid is verified by whichever key of its alg signed it (§27 asks for no kid)", async () => {
    const w = await world();
    await setIssuerModes(w.issuer, { jwks: "rotated" }); // `rsa-1` and `rsa-2`: two RS256 keys
    for (const kid of ["rsa-1", "rsa-2"] as const) {
      const token = await signToken(w.claims(), kid, { kid: undefined });
      expect(
        JSON.parse(new TextDecoder().decode(base64url.decode(token.split(".")[0] ?? ""))),
      ).not.toHaveProperty("kid");
      await exchangeOk(w.trust.id, token);
    }
    // Signed by neither: each is tried, and none verifies it.
    const stranger = await generateKeyPair("RS256");
    const forged = await new SignJWT(w.claims())
      .setProtectedHeader({ alg: "RS256" })
      .sign(stranger.privateKey);
    await w.refused(forged, /signature does not verify/);
    // A claim that fails under the key that verified the signature is that claim's failure.
    await w.refused(await signToken(w.claims({ aud: "someone-else" }), "rsa-2", { kid: undefined }), /`aud`/);
  });

  it("a token that names no kid passes over a key unfit for its alg (an RSA key under 2048 bits) to the one that signed it", async () => {
    const w = await world();
    await setIssuerModes(w.issuer, { jwks: "legacy" }); // a 1024-bit RS256 key, then `rsa-1`
    await exchangeOk(w.trust.id, await signToken(w.claims(), "rsa-1", { kid: undefined }));
    // Signed by none of them: the key that could have verified it says its signature does not.
    const stranger = await generateKeyPair("RS256");
    const forged = await new SignJWT(w.claims())
      .setProtectedHeader({ alg: "RS256" })
      .sign(stranger.privateKey);
    await w.refused(forged, /signature does not verify/);
    // Only unfit keys of its `alg` (another issuer: a key set is kept 10 minutes): the refusal
    // names the keys, not a signature.
    const unfit = await world();
    await setIssuerModes(unfit.issuer, { jwks: "unfit" });
    await unfit.refused(
      await signToken(unfit.claims(), "rsa-1", { kid: undefined }),
      /does not fit its `alg`/,
    );
  });

  it("a token that names no kid is tried with at most 16 keys of its alg; past them it must name one", async () => {
    const w = await world();
    await setIssuerModes(w.issuer, { jwks: "crowded" }); // 16 other ES256 keys, then `ec-1`
    await w.refused(
      await signToken(w.claims(), "ec-1", { kid: undefined }),
      /names no `kid`, and the issuer's key set holds more than 16 keys of its `alg`/,
    );
    await exchangeOk(w.trust.id, await signToken(w.claims(), "ec-1"));
  });

  it("a discovery document with its jwks_uri alone is enough (§27 asks nothing else of it)", async () => {
    const w = await world();
    await setIssuerModes(w.issuer, { discovery: "minimal" });
    await exchangeOk(w.trust.id, await signToken(w.claims()));
    expect(await issuerRequests(w.issuer)).toEqual(["/.well-known/openid-configuration", "/jwks"]);
  });

  it("a key set fetched for the first time serves a kid it holds; one it lacks is refused after that one fetch", async () => {
    const w = await world();
    await w.refused(await signToken(w.claims(), "rsa-2"), /No key of the issuer's key set matches/);
    expect(await issuerRequests(w.issuer)).toEqual(["/.well-known/openid-configuration", "/jwks"]);
  });
});

describe("the claims", () => {
  it.each<[string, (c: () => JWTPayload) => Record<string, unknown>, RegExp]>([
    ["expired", (c) => ({ ...c(), exp: now() - 3600 }), /expired \(`exp`\)/],
    ["expired within the clock tolerance", (c) => ({ ...c(), exp: now() - 5 }), /expired \(`exp`\)/],
    [
      "iat over 60 s ahead",
      (c) => ({ ...c(), iat: now() + 120, nbf: now() }),
      /`iat` is more than 60 s in the future/,
    ],
    ["nbf over 60 s ahead", (c) => ({ ...c(), nbf: now() + 120 }), /`nbf` is more than 60 s in the future/],
    ["exp over 24 h after iat", (c) => ({ ...c(), iat: now(), exp: now() + 86_401 }), /more than 24 h after/],
    ["another iss", (c) => ({ ...c(), iss: "https://evil.example.com" }), /`iss` is not the trust's issuer/],
    ["another aud", (c) => ({ ...c(), aud: "someone-else" }), /`aud` is not, and does not contain/],
    ["an aud list without it", (c) => ({ ...c(), aud: ["a", "b"] }), /`aud` is not, and does not contain/],
    ["no jti", (c) => ({ ...c(), jti: undefined }), /no `jti` claim/],
    ["an empty jti", (c) => ({ ...c(), jti: "" }), /`jti` must be a string/],
    ["a numeric jti", (c) => ({ ...c(), jti: 5 }), /`jti` must be a string/],
    ["a numeric sub", (c) => ({ ...c(), sub: 5 }), /`sub` must be a string/],
    ["no exp", (c) => ({ ...c(), exp: undefined }), /no `exp` claim/],
    ["a string iat", (c) => ({ ...c(), iat: "now" }), /`iat`/],
    [
      "no iat and exp over 24 h from now",
      (c) => ({ ...c(), iat: undefined, exp: now() + 86_500 }),
      /no `iat`, and its `exp` is more than 24 h from now/,
    ],
    ["a string exp", (c) => ({ ...c(), exp: "soon" }), /`exp` claim is not valid/],
    [
      "an unmet condition",
      (c) => ({ ...c(), ref: "refs/tags/v1" }),
      /`ref` claim does not meet the trust's condition/,
    ],
    [
      "a missing condition claim",
      (c) => ({ ...c(), repository: undefined }),
      /`repository` claim does not meet/,
    ],
    [
      "a non-string condition claim",
      (c) => ({ ...c(), repository: ["acme/storefront"] }),
      /`repository` claim does not meet/,
    ],
    [
      "a prefix of the pattern",
      (c) => ({ ...c(), repository: "acme/storefront-fork" }),
      /`repository` claim does not meet/,
    ],
  ])("refuses a token with %s", async (_name, make, message) => {
    const w = await world();
    await w.refused(await signToken(make(w.claims) as JWTPayload), message);
  });

  it("takes iat and nbf up to 60 s ahead, an aud list holding the audience, and globs", async () => {
    const w = await world({ conditions: { sub: "repo:acme/*:ref:refs/heads/*", repository: "acme/*front" } });
    const token = await signToken(
      w.claims({ iat: now() + 30, nbf: now() + 30, exp: now() + 600, aud: ["other", w.trust.audience] }),
      "ec-1",
    );
    expect((await exchange(w.trust.id, token)).status).toBe(201);
  });

  it("takes a token without iat or sub (§27: iat checked when present, sub recorded where present)", async () => {
    const w = await world({ conditions: { repository: "acme/*" } });
    const bare = await signToken(w.claims({ iat: undefined, sub: undefined, exp: now() + 600 }));
    const res = await exchange(w.trust.id, bare);
    expect(res.status, res.raw).toBe(201);
    expect(res.body.oidc).toEqual({ trust_id: w.trust.id, subject: null });
    const empty = await world({ conditions: { sub: "*" } });
    const emptySub = await exchange(empty.trust.id, await signToken(empty.claims({ sub: "" })));
    expect(emptySub.status, emptySub.raw).toBe(201);
    expect(emptySub.body.oidc?.subject).toBe("");
  });

  it("exchanges a jti once: a replay is refused, and of two exchanges at once exactly one succeeds", async () => {
    const w = await world();
    const token = await signToken(w.claims());
    await exchangeOk(w.trust.id, token);
    await w.refused(token, /already exchanged \(`jti`\)/);
    const racing = await signToken(w.claims());
    const results = await Promise.all([1, 2, 3].map(() => exchange(w.trust.id, racing)));
    expect(results.map((r) => r.status).sort()).toEqual([201, 401, 401]);
  });

  it("exchanges a jti once whatever the trust: the same token under another trust of the issuer is a replay", async () => {
    const w = await world();
    const res = await request<{ id: string }>("POST", "/v1/oidc-trusts", {
      key: w.owner.key,
      body: {
        name: "second",
        issuer: w.issuer,
        audience: w.trust.audience,
        conditions: { repository: "acme/*" },
      },
    });
    const token = await signToken(w.claims());
    await exchangeOk(w.trust.id, token);
    const replay = expectError(await exchange(res.body.id, token), 401, "unauthenticated");
    expect(replay.message).toMatch(/already exchanged \(`jti`\)/);
    // Another token of the same issuer with its own jti goes through under the second trust.
    await exchangeOk(res.body.id, await signToken(w.claims()));
  });
});

describe("an issuer that misbehaves: 401 naming it, never 500", () => {
  it.each<[string, { discovery?: string; jwks?: string }, RegExp]>([
    ["answers garbage for its configuration", { discovery: "garbage" }, /OpenID configuration is not JSON/],
    ["fails its configuration", { discovery: "error" }, /OpenID configuration could not be fetched/],
    ["names another issuer", { discovery: "other-issuer" }, /names another issuer/],
    ["answers a huge configuration", { discovery: "huge" }, /OpenID configuration could not be fetched/],
    ["answers garbage for its keys", { jwks: "garbage" }, /key set could not be fetched or read/],
    ["answers no JWK set", { jwks: "invalid" }, /not a JWK set/],
    ["fails its keys", { jwks: "error" }, /key set could not be fetched or read/],
  ])("an issuer that %s", async (_name, modes, message) => {
    const w = await world();
    await setIssuerModes(w.issuer, modes);
    await w.refused(await signToken(w.claims()), message);
  });

  it("an issuer that is not there", async () => {
    const { owner } = await createOrgWithOwner();
    const issuer = `http://127.0.0.1:1/${unique("gone")}`;
    const trust = await request<{ id: string; audience: string }>("POST", "/v1/oidc-trusts", {
      key: owner.key,
      body: { name: "gone", issuer, audience: "a", conditions: { sub: "*" } },
    });
    const res = await exchange(trust.body.id, await signToken(claimsFor(issuer, "a")));
    expect(expectError(res, 401, "unauthenticated").message).toMatch(/could not be fetched/);
  });

  it.each<[string, { discovery?: string; jwks?: string }]>([
    ["configuration", { discovery: "slow" }],
    ["key set", { jwks: "slow" }],
  ])(
    "a %s that never comes ends within 10 s, while other requests are answered at once",
    async (_which, modes) => {
      const w = await world();
      await setIssuerModes(w.issuer, modes);
      const start = Date.now();
      const slow = exchange(w.trust.id, await signToken(w.claims()));
      const other = await request("GET", "/v1/orgs", { key: w.owner.key });
      expect(other.status).toBe(200);
      expect(Date.now() - start).toBeLessThan(2_000);
      const res = await slow;
      expect(expectError(res, 401, "unauthenticated").message).toMatch(/did not arrive in time/);
      expect(Date.now() - start).toBeLessThan(10_000);
    },
    20_000,
  );
});

describe("an issuer of the production rules", () => {
  it("is never fetched over http:// without ALLOW_INSECURE_OIDC_ISSUERS, even for a trust made with it", async () => {
    const w = await world();
    const res = await exchange(w.trust.id, await signToken(w.claims()), {
      bindings: { ALLOW_INSECURE_OIDC_ISSUERS: "false" },
    });
    expect(expectError(res, 401, "unauthenticated").message).toMatch(
      /issuer is not a URL an issuer may have/,
    );
    expect(await issuerRequests(w.issuer)).toEqual([]);
  });
});
