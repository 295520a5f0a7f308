/**
 * Quiet logs for errors a test provokes on purpose: console.error and console.warn lines that
 * match `expected` are kept (for the test to assert on) instead of printed; any other line is
 * printed as usual, so an unexpected error still shows. Call in `beforeEach` (or a test) and
 * `restore()` in `afterEach` (or at its end).
 */
import { vi } from "vitest";

export function quietExpectedLogs(expected: RegExp): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const spies = (["error", "warn"] as const).map((method) => {
    const original = console[method].bind(console);
    return vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      const line = args.map(String).join(" ");
      if (expected.test(line)) lines.push(line);
      else original(...args);
    });
  });
  const restore = () => {
    for (const spy of spies) spy.mockRestore();
  };
  return { lines, restore };
}
