/** The pure sliding window over a fake clock: exactness, reset values, pruning. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decide } from "../../src/rate-limit/window";

const WINDOW = 60_000;
const T = 1_700_000_000_000;

/** A limiter over a fake clock that stores what the Durable Object stores. */
function fakeLimiter(limit: number) {
  let stored: number[] = [];
  return {
    hit(now: number) {
      const step = decide(stored, now, limit, WINDOW);
      stored = stored.filter((at) => at > step.pruneThrough);
      if (step.allowed) stored.push(now);
      return step;
    },
    get stored() {
      return stored;
    },
  };
}

describe("decide: admission at the boundary", () => {
  it("admits `limit` requests at t, refuses until t+60000, admits again at exactly t+60000", () => {
    const limiter = fakeLimiter(3);
    for (let i = 0; i < 3; i++) expect(limiter.hit(T).allowed).toBe(true);
    expect(limiter.hit(T).allowed).toBe(false);
    expect(limiter.hit(T + 59_999).allowed).toBe(false);
    const back = limiter.hit(T + 60_000);
    expect(back.allowed).toBe(true);
    // All three from t left at t+60000; only the new one counts.
    expect(back.remaining).toBe(2);
  });

  it("frees exactly one slot per request that leaves the window", () => {
    const limiter = fakeLimiter(2);
    expect(limiter.hit(T).allowed).toBe(true);
    expect(limiter.hit(T + 10_000).allowed).toBe(true);
    expect(limiter.hit(T + 59_999).allowed).toBe(false);
    expect(limiter.hit(T + 60_000).allowed).toBe(true);
    expect(limiter.hit(T + 60_001).allowed).toBe(false);
    expect(limiter.hit(T + 69_999).allowed).toBe(false);
    expect(limiter.hit(T + 70_000).allowed).toBe(true);
  });

  it("counts down remaining to 0, then refuses with remaining 0", () => {
    const limiter = fakeLimiter(100);
    const remaining = Array.from({ length: 101 }, (_, i) => limiter.hit(T + i));
    expect(remaining.slice(0, 100).map((d) => d.remaining)).toEqual(
      Array.from({ length: 100 }, (_, i) => 99 - i),
    );
    expect(remaining[100]).toMatchObject({ allowed: false, remaining: 0, limit: 100 });
  });

  it("does not count refused requests", () => {
    const limiter = fakeLimiter(1);
    expect(limiter.hit(T).allowed).toBe(true);
    for (let ms = 1; ms < WINDOW; ms += 997) expect(limiter.hit(T + ms).allowed).toBe(false);
    expect(limiter.stored).toEqual([T]);
    expect(limiter.hit(T + WINDOW).allowed).toBe(true);
  });
});

describe("decide: reset", () => {
  it("is 0 when the window is empty after the decision", () => {
    expect(decide([], T, 0, WINDOW)).toMatchObject({ allowed: false, remaining: 0, reset: 0 });
    expect(decide([T - WINDOW], T, 0, WINDOW).reset).toBe(0);
  });

  it("is the full window for a first request, which is itself the oldest one counted", () => {
    expect(decide([], T, 10, WINDOW)).toMatchObject({ allowed: true, remaining: 9, reset: 60 });
  });

  it("is whole seconds rounded up until the oldest counted request leaves", () => {
    expect(decide([T], T + 1, 10, WINDOW).reset).toBe(60); // 59.999 s → 60
    expect(decide([T], T + 1_000, 10, WINDOW).reset).toBe(59); // exactly 59 s
    expect(decide([T], T + 1_001, 10, WINDOW).reset).toBe(59); // 58.999 s → 59
    expect(decide([T], T + 59_999, 1, WINDOW)).toMatchObject({ allowed: false, reset: 1 }); // 1 ms → 1
    expect(decide([T + 5_000, T], T + 30_000, 10, WINDOW).reset).toBe(30); // oldest, whatever the order
  });

  it("on a refusal is ≥ 1, and tight: refused one second earlier, admitted at exactly `reset`", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: WINDOW - 1 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 0, max: WINDOW - 1 }),
        (offsets, wait) => {
          const stored = offsets.map((o) => T + o);
          // The newest stored request is still in the window, so the window is full at `limit`.
          const now = T + Math.max(...offsets) + wait;
          const limit = stored.filter((at) => at > now - WINDOW).length;
          const refused = decide(stored, now, limit, WINDOW);
          expect(refused.allowed).toBe(false);
          expect(refused.reset).toBeGreaterThanOrEqual(1);
          expect(decide(stored, now + (refused.reset - 1) * 1000, limit, WINDOW).allowed).toBe(false);
          expect(decide(stored, now + refused.reset * 1000, limit, WINDOW).allowed).toBe(true);
        },
      ),
    );
  });
});

describe("decide: pruning", () => {
  it("marks every entry that left the window for deletion and keeps the rest", () => {
    const step = decide([T - 60_001, T - 60_000, T - 59_999, T], T, 10, WINDOW);
    expect(step.pruneThrough).toBe(T - 60_000);
    expect(step).toMatchObject({ allowed: true, remaining: 7, reset: 1 });
  });

  it("never stores more than `limit` entries, however long the traffic runs", () => {
    const limiter = fakeLimiter(5);
    for (let now = T; now < T + 10 * WINDOW; now += 250) {
      limiter.hit(now);
      expect(limiter.stored.length).toBeLessThanOrEqual(5);
    }
  });
});

describe("decide: exactness (property-based)", () => {
  it("never admits more than `limit` in any 60 s window, and admits whenever fewer are counted", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        // Gaps between requests: many 0s (simultaneous), some up to a bit over the window.
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2_000 }), fc.integer({ max: 70_000 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (limit, gaps) => {
          const limiter = fakeLimiter(limit);
          const admitted: number[] = [];
          let now = T;
          for (const gap of gaps) {
            now += Math.max(0, gap);
            const inWindow = admitted.filter((at) => at > now - WINDOW).length;
            const step = limiter.hit(now);
            // Admitted exactly when fewer than `limit` admitted requests are in (now - 60 s, now].
            expect(step.allowed).toBe(inWindow < limit);
            const counted = inWindow + (step.allowed ? 1 : 0);
            expect(step.remaining).toBe(limit - counted);
            if (step.allowed) admitted.push(now);
            expect(limiter.stored.length).toBeLessThanOrEqual(limit);
          }
          // Any window [s, s + 60 s) holds at most `limit` admissions; the tightest windows start
          // at an admission.
          for (const start of admitted) {
            expect(admitted.filter((at) => at >= start && at < start + WINDOW).length).toBeLessThanOrEqual(
              limit,
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
