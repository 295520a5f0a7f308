/** src/lib/groups.ts `inGroups`: items in order, in groups bounded by weight and by count. */
import { describe, expect, it } from "vitest";
import { inGroups } from "../../src/lib/groups";

const size = (n: number) => n;

describe("inGroups", () => {
  it("keeps the order and cuts before the item that would take a group over its weight", () => {
    expect(inGroups([3, 4, 2, 5, 1], size, 7)).toEqual([[3, 4], [2, 5], [1]]);
    // Exactly the weight fits.
    expect(inGroups([7, 7], size, 7)).toEqual([[7], [7]]);
  });

  it("puts an item heavier than the weight in a group alone, never an empty group", () => {
    expect(inGroups([1, 10, 1], size, 5)).toEqual([[1], [10], [1]]);
    expect(inGroups([], size, 5)).toEqual([]);
  });

  it("cuts at `count` items too", () => {
    expect(inGroups([1, 1, 1, 1, 1], size, 100, 2)).toEqual([[1, 1], [1, 1], [1]]);
  });

  it("weighs each item once", () => {
    let calls = 0;
    inGroups(
      [1, 2, 3],
      (n) => {
        calls++;
        return n;
      },
      2,
    );
    expect(calls).toBe(3);
  });
});
