/**
 * Where a request's D1 session starts, how bookmarks compare and how the header reads
 * (src/db/session.ts), and the header's MAC (src/crypto/bookmarks.ts).
 */
import { describe, expect, it } from "vitest";
import { bookmarkHeader, bookmarkIn } from "../../src/crypto/bookmarks";
import { VariableKeyConfigError } from "../../src/crypto/variables";
import { isBookmark, laterBookmark, parseBookmarkHeader, sessionStart } from "../../src/db/session";

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

describe("the X-D1-Bookmark header", () => {
  const keyOf = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
  const KEYS = { current: keyOf(1) };

  it("reads as its database, bookmark and MAC, each but the bookmark optional; anything else is no bookmark", () => {
    const mac = "A".repeat(43);
    expect(parseBookmarkHeader(`DB_ORG_2:${OLD}.${mac}`)).toEqual({
      database: "DB_ORG_2",
      bookmark: OLD,
      mac,
    });
    expect(parseBookmarkHeader(`DB:${OLD}`)).toEqual({ database: "DB", bookmark: OLD, mac: null });
    expect(parseBookmarkHeader(OLD)).toEqual({ database: null, bookmark: OLD, mac: null });
    for (const bad of [
      `DB:${OLD}.`,
      `DB:${OLD}.${mac}A`,
      `DB:${OLD}.${"A".repeat(42)}=`,
      `${OLD}.${mac}.${mac}`,
    ]) {
      expect(parseBookmarkHeader(bad), bad).toBeUndefined();
    }
  });

  it("vouches for the bookmarks it signed, for their database, under the current key or the previous one", async () => {
    const header = await bookmarkHeader(KEYS, "DB", OLD);
    expect(header).toMatch(/^DB:[0-9a-f-]{59}\.[A-Za-z0-9_-]{43}$/);
    expect(await bookmarkIn(KEYS, header, "DB")).toBe(OLD);
    // Another database's, whatever its MAC.
    expect(await bookmarkIn(KEYS, header, "DB_ORG_2")).toBeNull();
    expect(await bookmarkIn(KEYS, header.replace(/^DB:/, "DB_ORG_2:"), "DB_ORG_2")).toBeNull();
    // Rotated: still good while the old key is the previous one, then no longer.
    expect(await bookmarkIn({ current: keyOf(2), previous: keyOf(1) }, header, "DB")).toBe(OLD);
    expect(await bookmarkIn({ current: keyOf(2) }, header, "DB")).toBeNull();
  });

  it("ignores what it did not sign: bare, without a MAC, another bookmark's MAC, a made-up one", async () => {
    const signedNew = await bookmarkHeader(KEYS, "DB", NEW);
    const macOfNew = signedNew.slice(signedNew.indexOf(".") + 1);
    for (const value of [OLD, `DB:${OLD}`, `DB:${OLD}.${macOfNew}`, `DB:${OLD}.${"A".repeat(43)}`]) {
      expect(await bookmarkIn(KEYS, value, "DB"), value).toBeNull();
    }
    expect(await bookmarkIn(KEYS, "not-a-bookmark", "DB")).toBeUndefined();
  });

  it("refuses to sign or check without a usable VARIABLES_KEY", async () => {
    await expect(bookmarkHeader({ current: undefined }, "DB", OLD)).rejects.toBeInstanceOf(
      VariableKeyConfigError,
    );
    await expect(
      bookmarkIn({ current: "short" }, `DB:${OLD}.${"A".repeat(43)}`, "DB"),
    ).rejects.toBeInstanceOf(VariableKeyConfigError);
  });
});
