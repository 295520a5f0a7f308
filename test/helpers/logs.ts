/**
 * Log lines a test causes on purpose (a failed delivery, a limiter outage, an uncaught throw)
 * are captured instead of printed, so a green run prints nothing alarming, and the test can
 * check that the line it expects was written.
 */
import { afterAll, afterEach, beforeAll, beforeEach, expect, type MockInstance, vi } from "vitest";

export type LogLine = Record<string, unknown>;

type Spy = MockInstance<(...args: unknown[]) => void>;

/** The levels a `captureLogs` holds right now, with its spy (test/helpers/cron.ts adds to it). */
const capturing = new Map<"log" | "warn" | "error", Spy>();

/**
 * `console[level]` captured while `run` runs: by the `captureLogs` that holds it already, else by
 * a spy of its own, removed after. Answers what `run` answered and the lines written meanwhile.
 */
export async function capturedWhile<T>(
  levels: Array<"log" | "warn" | "error">,
  run: () => Promise<T>,
): Promise<{ result: T; lines: LogLine[] }> {
  const spies = levels.map((level) => {
    const held = capturing.get(level);
    const spy: Spy = held ?? vi.spyOn(console, level).mockImplementation(() => undefined);
    return { spy, own: held === undefined, from: spy.mock.calls.length };
  });
  // Read before a spy of its own is restored (which clears what it recorded).
  const written = () =>
    spies.flatMap(({ spy, from }) => spy.mock.calls.slice(from).map(([line]) => parseLogLine(line)));
  try {
    const result = await run();
    return { result, lines: written() };
  } finally {
    for (const { spy, own } of spies) if (own) spy.mockRestore();
  }
}

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
  let spy: Spy | undefined;
  const [before, after] = span === "all" ? [beforeAll, afterAll] : [beforeEach, afterEach];
  before(() => {
    spy = vi.spyOn(console, level).mockImplementation(() => undefined);
    capturing.set(level, spy);
  });
  after(() => {
    capturing.delete(level);
    spy?.mockRestore();
    spy = undefined;
  });
  return {
    lines: () => (spy?.mock.calls ?? []).map(([line]) => parseLogLine(line)),
  };
}

/** A line the logger wrote (JSON), or `{msg}` for any other text. */
export function parseLogLine(line: unknown): LogLine {
  try {
    return JSON.parse(String(line)) as LogLine;
  } catch {
    return { msg: String(line) };
  }
}

/**
 * The "unhandled error" line of a request a test's SQL trigger refused (`RAISE(ABORT, 'refused by
 * the test')`): the service answered 500 and logged the fault once, under the answer's request id.
 */
export function expectRefusedByTrigger(lines: LogLine[], res: { headers: Headers }): void {
  expect(lines).toContainEqual(
    expect.objectContaining({
      level: "error",
      msg: "unhandled error",
      request_id: res.headers.get("x-request-id"),
      error: expect.stringContaining("refused by the test"),
    }),
  );
}
