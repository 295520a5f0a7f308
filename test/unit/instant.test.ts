/** Instants in requests (src/http/instant.ts): every RFC 3339 date-time, leap seconds included. */
import { describe, expect, it } from "vitest";
import { instant } from "../../src/openapi/primitives";

const schema = instant();
const read = (value: string) => schema.safeParse(value);

describe("instant()", () => {
  it("reads every RFC 3339 form as the UTC instant it names, with milliseconds", () => {
    expect(read("2026-11-20T10:04:05Z").data).toBe("2026-11-20T10:04:05.000Z");
    expect(read("2026-11-20t10:04:05.1234z").data).toBe("2026-11-20T10:04:05.123Z");
    expect(read("2026-11-20T11:04:05+01:00").data).toBe("2026-11-20T10:04:05.000Z");
  });

  it("takes a leap second, the last second of a UTC day, as 23:59:59 with its fraction", () => {
    expect(read("2016-12-31T23:59:60Z").data).toBe("2016-12-31T23:59:59.000Z");
    expect(read("2016-12-31T23:59:60.5Z").data).toBe("2016-12-31T23:59:59.500Z");
    // The same second, written in another zone.
    expect(read("2017-01-01T00:59:60+01:00").data).toBe("2016-12-31T23:59:59.000Z");
  });

  it("refuses second 60 anywhere but the last minute of a UTC day, and what is no date-time", () => {
    for (const value of [
      "2016-12-31T12:30:60Z",
      "2016-12-31T23:59:60+01:00",
      "2016-12-31T23:59:61Z",
      "2016-12-31T23:60:00Z",
      "2016-02-30T10:00:00Z",
      "2016-12-31 23:59:59Z",
      "2016-12-31T23:59:59",
      "yesterday",
    ]) {
      expect(read(value).success, value).toBe(false);
    }
  });
});
