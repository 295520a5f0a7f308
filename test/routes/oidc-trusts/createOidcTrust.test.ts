/** createOidcTrust: POST /v1/oidc-trusts (API_CONTRACT §27, §28). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { OidcTrustRecord } from "../../../src/schemas/oidc";
import { request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { type ErrorBody, expectError, NEW_ID, TS } from "../../helpers/expect";
import {
  type Caller,
  createCaller,
  createOrgWithOwner,
  createProject,
  deriveKey,
} from "../../helpers/factories";
import { newIssuer, trustBody } from "../../helpers/oidc";
import { runCommonRouteTests } from "../../helpers/security";

const create = (caller: Caller, body: unknown, headers: Record<string, string> = {}) =>
  request<OidcTrustRecord & ErrorBody>("POST", "/v1/oidc-trusts", { key: caller.key, body, headers });

const trustCount = async (orgId: string) =>
  (
    await env.DB.prepare("SELECT count(*) AS n FROM oidc_trusts WHERE org_id = ?")
      .bind(orgId)
      .first<{ n: number }>()
  )?.n ?? 0;

describe("POST /v1/oidc-trusts", () => {
  it("makes a trust acting as the caller's account under the caller's key, with the caller's powers by default", async () => {
    const { org, owner } = await createOrgWithOwner();
    const issuer = newIssuer();
    const requestId = `trust-${crypto.randomUUID()}`;
    const res = await create(owner, trustBody(issuer, { name: "storefront main" }), {
      "x-request-id": requestId,
    });
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      org_id: org.id,
      account_id: owner.accountId,
      parent_id: owner.keyId,
      name: "storefront main",
      issuer,
      audience: "deploy-platform",
      conditions: { repository: "acme/storefront", ref: "refs/heads/*" },
      scopes: ["*"],
      project_ids: null,
      ttl: 900,
      created_at: expect.stringMatching(TS),
    });
    expect(res.headers.get("location")).toBe(`/v1/oidc-trusts/${res.body.id}`);
    const read = await request("GET", `/v1/oidc-trusts/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
    expect(res.headers.get("etag")).toBe(read.headers.get("etag"));

    const [entry] = await rowsOf(requestId);
    expect(entry).toMatchObject({
      action: "createOidcTrust",
      target_type: "oidc_trust",
      target_id: res.body.id,
    });
    expect(JSON.parse(String(entry?.changes))).toMatchObject({ issuer: { from: null, to: issuer } });
    // The directory indexes it by id, for the exchange.
    const indexed = await env.DB.prepare("SELECT org_id FROM oidc_trust_index WHERE trust_id = ?")
      .bind(res.body.id)
      .first<{ org_id: string }>();
    expect(indexed?.org_id).toBe(org.id);
  });

  it("takes narrower scopes, projects and a ttl; the most a caller can give is its own", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const res = await create(
      owner,
      trustBody(newIssuer(), { scopes: ["deployments:write"], project_ids: [project.id], ttl: 60 }),
    );
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toMatchObject({ scopes: ["deployments:write"], project_ids: [project.id], ttl: 60 });

    const narrow = await deriveKey(owner, { scopes: ["api-keys:write", "deployments:read"] });
    const exceeding = await create(narrow, trustBody(newIssuer(), { scopes: ["deployments:write"] }));
    expect(expectError(exceeding, 403, "forbidden").cause).toEqual([
      { path: "scopes", message: expect.stringContaining("deployments:write") },
    ]);
    // Left out: the calling key's own.
    const own = await create(narrow, trustBody(newIssuer()));
    expect(own.body.scopes).toEqual(["api-keys:write", "deployments:read"]);
  });

  it("is for an org owner or admin (403 unauthorized), and never for a key restricted to projects (§28)", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const admin = await createCaller(org, "admin");
    expect((await create(admin, trustBody(newIssuer()))).status).toBe(201);
    const member = await createCaller(org, "member", owner);
    expectError(await create(member, trustBody(newIssuer())), 403, "unauthorized");
    const restricted = await deriveKey(owner, { project_ids: [project.id] });
    const refused = expectError(await create(restricted, trustBody(newIssuer())), 403, "unauthorized");
    expect(refused.message).toMatch(/restricted to some projects/);
    expect(await trustCount(org.id)).toBe(1);
  });

  it("needs api-keys:write", async () => {
    const { owner } = await createOrgWithOwner();
    const reader = await deriveKey(owner, { scopes: ["api-keys:read"] });
    const res = expectError(await create(reader, trustBody(newIssuer())), 403, "forbidden");
    expect(res.message).toContain("api-keys:write");
  });

  it.each([
    ["https://token.actions.githubusercontent.com/?a=1", "query"],
    ["https://token.actions.githubusercontent.com/#x", "fragment"],
    ["ftp://issuer.example.com", "scheme"],
    ["not a url", "absolute"],
    [" https://token.actions.githubusercontent.com", "a leading space the parser would strip"],
    ["https:token.actions.githubusercontent.com", "no // the parser would add"],
    ["https://token.actions.githubusercontent.com/a b", "a space"],
  ])("refuses the issuer %j (400, %s)", async (issuer) => {
    const { owner } = await createOrgWithOwner();
    expectError(await create(owner, trustBody(issuer)), 400, "bad_input", "issuer");
  });

  it("takes any https issuer without query or fragment, kept exactly as written (compared with `iss` so)", async () => {
    const { owner } = await createOrgWithOwner();
    for (const issuer of [
      "https://token.actions.githubusercontent.com",
      "https://gitlab.example.com/",
      "HTTPS://Token.Actions.GithubUserContent.com",
      "https://issuer.example.com:443/tenant",
    ]) {
      const res = await create(owner, trustBody(issuer));
      expect(res.status, res.raw).toBe(201);
      expect(res.body.issuer).toBe(issuer);
    }
  });

  it("takes http:// and loopback issuers only with ALLOW_INSECURE_OIDC_ISSUERS=true", async () => {
    const { owner } = await createOrgWithOwner();
    const issuer = newIssuer(); // http://127.0.0.1:<port>/<bucket>
    const strict = await request<ErrorBody>("POST", "/v1/oidc-trusts", {
      key: owner.key,
      body: trustBody(issuer),
      bindings: { ALLOW_INSECURE_OIDC_ISSUERS: "false" },
    });
    expectError(strict, 400, "bad_input", "issuer");
    const strictLoopback = await request<ErrorBody>("POST", "/v1/oidc-trusts", {
      key: owner.key,
      body: trustBody("https://127.0.0.1/issuer"),
      bindings: { ALLOW_INSECURE_OIDC_ISSUERS: "false" },
    });
    expectError(strictLoopback, 400, "bad_input", "issuer");
    expect((await create(owner, trustBody(issuer))).status).toBe(201);
  });

  it.each([
    [{}, "conditions"],
    [{ ref: "refs/heads/main" }, "conditions"],
    [{ sub: "" }, "conditions.sub"],
    [{ sub: "x".repeat(501) }, "conditions.sub"],
    [{ sub: "\u{1F680}".repeat(501) }, "conditions.sub"],
    [{ sub: 5 }, "conditions.sub"],
    [
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`c${i}`, "x"]).concat([["sub", "y"]])),
      "conditions",
    ],
    [["sub"], "conditions"],
  ])("refuses conditions %j (400 at %s)", async (conditions, path) => {
    const { owner } = await createOrgWithOwner();
    expectError(await create(owner, trustBody(newIssuer(), { conditions })), 400, "bad_input", path);
  });

  it("takes a pattern of 500 characters outside the BMP (1,000 UTF-16 units): characters, as the document's maxLength counts", async () => {
    const { owner } = await createOrgWithOwner();
    const conditions = { sub: "\u{1F680}".repeat(500), repository: `${"a".repeat(499)}\u{1F680}` };
    const res = await create(owner, trustBody(newIssuer(), { conditions }));
    expect(res.status, res.raw).toBe(201);
    expect(res.body.conditions).toEqual(conditions);
  });

  it("takes any claim name: spaces, non-ASCII, 300 characters (§27 names no rule for them)", async () => {
    const { owner } = await createOrgWithOwner();
    const conditions = { sub: "repo:*", "has space": "x", région: "eu-*", ["c".repeat(300)]: "y" };
    const res = await create(owner, trustBody(newIssuer(), { conditions }));
    expect(res.status, res.raw).toBe(201);
    expect(res.body.conditions).toEqual(conditions);
  });

  it("keeps a condition on a claim named __proto__ (never dropped on its way in)", async () => {
    const { owner } = await createOrgWithOwner();
    const raw = `{"name":"p","issuer":"${newIssuer()}","audience":"a","conditions":{"__proto__":"x","sub":"y"}}`;
    const res = await request<OidcTrustRecord>("POST", "/v1/oidc-trusts", {
      key: owner.key,
      rawBody: raw,
      headers: { "content-type": "application/json" },
    });
    expect(res.status, res.raw).toBe(201);
    expect(Object.keys(JSON.parse(res.raw).conditions)).toEqual(["__proto__", "sub"]);
  });

  it.each([
    [{ ttl: 59 }, "ttl"],
    [{ ttl: 3601 }, "ttl"],
    [{ audience: "" }, "audience"],
    [{ audience: "a".repeat(256) }, "audience"],
    [{ name: "" }, "name"],
    [{ extra: 1 }, "extra"],
    [{ scopes: ["nope"] }, "scopes.0"],
  ])("refuses %j (400)", async (fields, path) => {
    const { owner } = await createOrgWithOwner();
    expectError(await create(owner, trustBody(newIssuer(), fields)), 400, "bad_input", path);
  });

  it("refuses a project that is not the organization's (400), making nothing", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { owner: stranger } = await createOrgWithOwner();
    const theirs = await createProject(stranger);
    expectError(
      await create(owner, trustBody(newIssuer(), { project_ids: [theirs.id] })),
      400,
      "bad_input",
      "project_ids.0",
    );
    expect(await trustCount(org.id)).toBe(0);
  });

  runCommonRouteTests(
    "POST /v1/oidc-trusts",
    async () => {
      const { owner } = await createOrgWithOwner();
      return { method: "POST", path: "/v1/oidc-trusts", body: trustBody(newIssuer()), caller: owner };
    },
    // Another organization's owner makes a trust of its own.
    { otherOrgStatus: 201 },
  );
});
