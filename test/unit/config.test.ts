/** The context's config: what each entry point reads from the environment, parsed once. */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseConfig, RATE_LIMIT_POLICIES } from "../../src/config";
import { DatabaseUnavailable, d1Of } from "../../src/db/databases";

const envWith = (vars: Record<string, string>) =>
  ({ ALLOW_INSECURE_WEBHOOKS: "false", DB: env.DB, DB_ORG_2: env.DB_ORG_2, ...vars }) as unknown as Env;

describe("parseConfig", () => {
  it("uses the production rate limits when RATE_LIMITS is unset or empty", () => {
    expect(parseConfig(envWith({})).rateLimits).toEqual(RATE_LIMIT_POLICIES);
    expect(parseConfig(envWith({ RATE_LIMITS: "" })).rateLimits).toEqual(RATE_LIMIT_POLICIES);
  });

  it("takes RATE_LIMITS' positive integers for known policies and ignores everything else", () => {
    const limits = parseConfig(
      envWith({ RATE_LIMITS: JSON.stringify({ default: 5000, reveal: 0, anonymous: 1.5, nope: 9 }) }),
    ).rateLimits;
    expect(limits).toEqual({ ...RATE_LIMIT_POLICIES, default: 5000 });
    expect(parseConfig(envWith({ RATE_LIMITS: "not json" })).rateLimits).toEqual(RATE_LIMIT_POLICIES);
  });

  it('reads ALLOW_INSECURE_WEBHOOKS as true only when it is exactly "true"', () => {
    expect(parseConfig(envWith({ ALLOW_INSECURE_WEBHOOKS: "true" })).allowInsecureWebhooks).toBe(true);
    expect(parseConfig(envWith({ ALLOW_INSECURE_WEBHOOKS: "TRUE" })).allowInsecureWebhooks).toBe(false);
  });

  it('reads ALLOW_INSECURE_OIDC_ISSUERS as true only when it is exactly "true" (absent: false)', () => {
    expect(parseConfig(envWith({ ALLOW_INSECURE_OIDC_ISSUERS: "true" })).allowInsecureOidcIssuers).toBe(true);
    expect(parseConfig(envWith({ ALLOW_INSECURE_OIDC_ISSUERS: "1" })).allowInsecureOidcIssuers).toBe(false);
    expect(parseConfig(envWith({})).allowInsecureOidcIssuers).toBe(false);
  });

  it("carries VARIABLES_KEY and, while rotating, VARIABLES_KEY_PREVIOUS", () => {
    expect(parseConfig(envWith({ VARIABLES_KEY: "a", VARIABLES_KEY_PREVIOUS: "b" })).variableKeys).toEqual({
      current: "a",
      previous: "b",
    });
  });

  it("reads the organization databases: DB by default, binding names, new ones placed among them", () => {
    expect(parseConfig(envWith({}))).toMatchObject({ orgDatabases: ["DB"], newOrgDatabases: ["DB"] });
    expect(parseConfig(envWith({ ORG_DATABASES: " DB , DB_ORG_2,DB " }))).toMatchObject({
      orgDatabases: ["DB", "DB_ORG_2"],
      newOrgDatabases: ["DB", "DB_ORG_2"],
    });
    expect(
      parseConfig(envWith({ ORG_DATABASES: "DB,DB_ORG_2", NEW_ORG_DATABASES: "DB_ORG_2" })).newOrgDatabases,
    ).toEqual(["DB_ORG_2"]);
    expect(() => parseConfig(envWith({ ORG_DATABASES: "DB,db-2" }))).toThrow(/db-2/);
    expect(() => parseConfig(envWith({ ORG_DATABASES: "DB", NEW_ORG_DATABASES: "DB_ORG_2" }))).toThrow(
      /NEW_ORG_DATABASES/,
    );
  });

  it("finds an organization database's binding at use; one not bound, or not D1, is DatabaseUnavailable", () => {
    const bound = envWith({});
    expect(d1Of(bound, "DB_ORG_2")).toBe(env.DB_ORG_2);
    expect(() => d1Of(bound, "DB_NOWHERE")).toThrow(DatabaseUnavailable);
    expect(() => d1Of(bound, "ALLOW_INSECURE_WEBHOOKS")).toThrow(DatabaseUnavailable);
  });
});
