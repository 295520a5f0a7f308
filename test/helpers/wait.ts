/** Waiting in tests: a pause, and polling until a condition holds. */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `intervalMs` until it holds; throws, naming `what`, once `timeoutMs` has
 * passed without it.
 */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 8000,
  intervalMs = 20,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await sleep(intervalMs);
  }
}
