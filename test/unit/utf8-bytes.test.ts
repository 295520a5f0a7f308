/** utf8Bytes (src/services/moves/json-rows.ts): a move's chunks are bounded in the bytes D1 counts. */
import { describe, expect, it } from "vitest";
import { utf8Bytes } from "../../src/lib/utf8-bytes";

describe("utf8Bytes", () => {
  it("counts what TextEncoder writes: 1, 2, 3 and 4 bytes a character", () => {
    for (const text of [
      "",
      "plain ascii",
      "é ü ß",
      "語 € ✓",
      "🚀 👩‍💻 𝄞",
      `a${"é".repeat(1000)}語🚀z`,
      '"\\\n\t',
    ]) {
      expect(utf8Bytes(text), text).toBe(new TextEncoder().encode(text).length);
    }
  });
});
