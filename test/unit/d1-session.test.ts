/** Where a request's D1 session starts, and how bookmarks compare (src/db/session.ts). */
import { describe, expect, it } from "vitest";
import { isBookmark, laterBookmark, sessionStart } from "../../src/db/session";

const OLD = "0000007b-0000b26e-00001538-0c3e87bb37b3db5cc52eedb93cd3b96b";
const NEW = "0000007b-0000b26f-00000001-00000000000000000000000000000000";

describe("sessionStart", () => {
  it("starts every method that may write on the primary, whatever bookmarks are known", () => {
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      expect(sessionStart(method)).toEqual({ mode: "first-primary" });
      expect(sessionStart(method, NEW, OLD)).toEqual({ mode: "first-primary" });
    }
  });

  it("starts a read on the nearest replica when no bookmark is known", () => {
    expect(sessionStart("GET")).toEqual({ mode: "first-unconstrained" });
    expect(sessionStart("HEAD", undefined, null)).toEqual({ mode: "first-unconstrained" });
  });

  it("starts a read from the later of the known bookmarks, in either order", () => {
    expect(sessionStart("GET", OLD, NEW)).toEqual({ mode: "bookmark", bookmark: NEW });
    expect(sessionStart("GET", NEW, OLD)).toEqual({ mode: "bookmark", bookmark: NEW });
    expect(sessionStart("GET", undefined, OLD)).toEqual({ mode: "bookmark", bookmark: OLD });
  });
});

describe("bookmarks", () => {
  it("compare as strings: a later commit is a greater string", () => {
    expect(laterBookmark(OLD, NEW)).toBe(NEW);
    expect(laterBookmark(NEW, OLD)).toBe(NEW);
    expect(laterBookmark(null, OLD)).toBe(OLD);
    expect(laterBookmark(OLD, undefined)).toBe(OLD);
    expect(laterBookmark(null, null)).toBeNull();
  });

  it("have D1's shape: 8-8-8-32 lower-case hexadecimal digits", () => {
    expect(isBookmark(OLD)).toBe(true);
    for (const bad of ["", "first-primary", OLD.toUpperCase(), `${OLD} `, OLD.slice(1), `${OLD}0`]) {
      expect(isBookmark(bad), bad).toBe(false);
    }
  });
});
