/** API_CONTRACT §30: a failed attempt is retried after about 1 s, 5 s and 30 s, then every 60 s, with no end. */
import { describe, expect, it } from "vitest";
import { retryDelayMs, STREAM_RETRY_MS } from "../../src/services/audit/stream-delivery";

describe("an audit stream's retry schedule", () => {
  it("1 s, 5 s, 30 s, then 60 s for every attempt after, without end", () => {
    expect(STREAM_RETRY_MS).toEqual([1_000, 5_000, 30_000, 60_000]);
    expect([1, 2, 3, 4, 5, 10, 1_000_000].map((failures) => retryDelayMs(failures))).toEqual([
      1_000, 5_000, 30_000, 60_000, 60_000, 60_000, 60_000,
    ]);
  });

  it("follows a schedule given instead (the tests' shortened one)", () => {
    expect([1, 2, 3, 4, 9].map((failures) => retryDelayMs(failures, [200, 400, 600, 800]))).toEqual([
      200, 400, 600, 800, 800,
    ]);
  });
});
