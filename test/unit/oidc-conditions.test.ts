/** A trust's conditions (API_CONTRACT §27): whole-value globs where `*` matches any run of characters. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { matchesPattern, unmetCondition } from "../../src/services/oidc/conditions";

/** The same rule as a regular expression, for comparison: every character literal but `*`. */
const reference = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .split("*")
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
      .join("[\\s\\S]*")}$`,
  ).test(value);

describe("matchesPattern", () => {
  it.each([
    ["acme/storefront", "acme/storefront", true],
    ["acme/storefront", "acme/storefront-fork", false],
    ["acme/storefront", "xacme/storefront", false],
    ["refs/heads/*", "refs/heads/main", true],
    ["refs/heads/*", "refs/heads/", true],
    ["refs/heads/*", "refs/tags/v1", false],
    ["repo:acme/*:ref:refs/heads/*", "repo:acme/web:ref:refs/heads/main", true],
    ["repo:acme/*:ref:refs/heads/*", "repo:evil/web:ref:refs/heads/main", false],
    ["*", "", true],
    ["a*a", "a", false],
    ["a*a", "aa", true],
    ["*.?+", "x.?+", true],
    ["*.?+", "x.a+", false],
    ["a**b", "ab", true],
  ])("%s against %s is %s", (pattern, value, expected) => {
    expect(matchesPattern(pattern, value)).toBe(expected);
  });

  it("agrees with the regular expression of the same rule on any pattern and value", () => {
    const alphabet = fc.constantFrom("a", "b", "*", ".", "/");
    const text = (max: number) => fc.array(alphabet, { maxLength: max }).map((cs) => cs.join(""));
    fc.assert(
      fc.property(text(8), text(12), (pattern, rawValue) => {
        const value = rawValue.replaceAll("*", "a");
        expect(matchesPattern(pattern, value)).toBe(reference(pattern, value));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("unmetCondition", () => {
  it("names the first claim that is missing, not a string, or not matched", () => {
    const conditions = { repository: "acme/*", ref: "refs/heads/main" };
    expect(unmetCondition(conditions, { repository: "acme/web", ref: "refs/heads/main" })).toBeUndefined();
    expect(unmetCondition(conditions, { repository: "acme/web" })).toBe("ref");
    expect(unmetCondition(conditions, { repository: ["acme/web"], ref: "refs/heads/main" })).toBe(
      "repository",
    );
    expect(unmetCondition(conditions, { repository: "evil/web", ref: "refs/heads/main" })).toBe("repository");
    // An inherited property is no claim.
    expect(unmetCondition({ toString: "*" }, {})).toBe("toString");
  });
});
