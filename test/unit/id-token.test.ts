/** An ID token's `exp`, read unverified for the exchange's Idempotency-Key (src/lib/id-token.ts). */
import { base64url } from "jose";
import { describe, expect, it } from "vitest";
import { TOKEN_MAX_LENGTH, unverifiedExp } from "../../src/lib/id-token";

const tokenOf = (payload: unknown, header: unknown = { alg: "RS256" }) =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.c2ln`;

describe("unverifiedExp", () => {
  it("reads a numeric exp from base64url JSON, whatever its padding and alphabet", () => {
    expect(unverifiedExp(tokenOf({ exp: 1_900_000_000 }))).toBe(1_900_000_000);
    // A payload whose base64url holds `_` and would need padding (47 characters).
    const token = tokenOf({ exp: 5, pad: "??>", more: "ÿÿ" });
    expect(token.split(".")[1]).toMatch(/^[A-Za-z0-9-]*_[A-Za-z0-9_-]*$/);
    expect((token.split(".")[1] ?? "").length % 4).toBe(3);
    expect(unverifiedExp(token)).toBe(5);
  });

  it("is undefined for what is no token, no JSON, no numeric exp, or over the bound", () => {
    expect(unverifiedExp("")).toBeUndefined();
    expect(unverifiedExp("a.b")).toBeUndefined();
    expect(unverifiedExp("a.%%%.c")).toBeUndefined();
    expect(unverifiedExp(`a.${base64url.encode("not json")}.c`)).toBeUndefined();
    expect(unverifiedExp(tokenOf(null))).toBeUndefined();
    expect(unverifiedExp(tokenOf({ exp: "1900000000" }))).toBeUndefined();
    expect(unverifiedExp(tokenOf({ sub: "x" }))).toBeUndefined();
    const huge = tokenOf({ exp: 5, pad: "x".repeat(TOKEN_MAX_LENGTH) });
    expect(huge.length).toBeGreaterThan(TOKEN_MAX_LENGTH);
    expect(unverifiedExp(huge)).toBeUndefined();
  });
});
