/**
 * Log lines a test causes on purpose (a failed delivery, a limiter outage, an uncaught throw)
 * are captured instead of printed, so a green run prints nothing alarming, and the test can
 * check that the line it expects was written.
 */
import { afterAll, afterEach, beforeAll, beforeEach, type MockInstance, vi } from "vitest";

export type LogLine = Record<string, unknown>;

/**
 * Captures `console[level]` for every test of the calling file or describe block (`log` is where
 * the logger writes `info` lines, such as a cron run's summary). `span: "all"` captures from
 * before the block's first hook to after its last test, for lines the queue writes in the
 * background while `beforeAll` hooks run; `lines()` then holds all of them.
 */
export function captureLogs(
  level: "log" | "warn" | "error",
  span: "each" | "all" = "each",
): { lines(): LogLine[] } {
  let spy: MockInstance<(...args: unknown[]) => void> | undefined;
  const [before, after] = span === "all" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(() => {
    spy = vi.spyOn(console, level).mockImplementation(() => undefined);
  });
  after(() => {
    spy?.mockRestore();
    spy = undefined;
  });
  return {
    lines: () =>
      (spy?.mock.calls ?? []).map(([line]) => {
        try {
          return JSON.parse(String(line)) as LogLine;
        } catch {
          return { msg: String(line) };
        }
      }),
  };
}
