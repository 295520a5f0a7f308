/**
 * Log lines a test causes on purpose (a failed delivery, a limiter outage, an uncaught throw)
 * are captured instead of printed, so a green run prints nothing alarming, and the test can
 * check that the line it expects was written.
 */
import { afterEach, beforeEach, type MockInstance, vi } from "vitest";

export type LogLine = Record<string, unknown>;

/** Captures `console[level]` for every test of the calling file or describe block. */
export function captureLogs(level: "warn" | "error"): { lines(): LogLine[] } {
  let spy: MockInstance<(...args: unknown[]) => void> | undefined;
  beforeEach(() => {
    spy = vi.spyOn(console, level).mockImplementation(() => undefined);
  });
  afterEach(() => {
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
