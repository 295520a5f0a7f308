// The `check()` of the scripts/check-*.mjs scripts: each check prints one line (`ok  ` or `FAIL`,
// then what it checks, and on a failure its detail when there is one) and a failure is recorded;
// `done()` then ends the script: on any failure it prints how many and exits 1, otherwise it
// prints the script's one-line summary.
//
//   const { check, fail, done } = checker("check:thing");
//   check(ok, "what holds", "what was found instead");
//   done("everything holds.");      // "check:thing: everything holds." or "check:thing failed (n)." and exit 1

/**
 * @param {string} name the script's name in its summary, e.g. "check:runtime"
 * @param {{ prefix?: () => string }} [options] `prefix()`: printed before each check's `what`
 *   (check:cli's and check:dev's time since their start)
 */
export function checker(name, { prefix } = {}) {
  /** @type {string[]} */
  const failures = [];
  /** One line for the check; a failure recorded unless `ok`. Returns `ok`. */
  const check = (ok, what, detail = "") => {
    const before = prefix ? `${prefix()} ` : "";
    console.log(`${ok ? "ok  " : "FAIL"} ${before}${what}${ok || !detail ? "" : `: ${detail}`}`);
    if (!ok) failures.push(what);
    return ok;
  };
  /** A failure that is not a check's, e.g. an error that cut the checks short: printed, recorded. */
  const fail = (err) => {
    console.error(err);
    failures.push(String(err));
  };
  /**
   * Ends the checks: on a failure, `name failed (n).` and `more` on stderr and exit code 1 (at once:
   * nothing after runs); otherwise `name: summary`.
   */
  const done = (summary, more = "") => {
    if (failures.length > 0) {
      console.error(`\n${name} failed (${failures.length}).${more}`);
      process.exit(1);
    }
    console.log(`${name}: ${summary}`);
  };
  return { check, fail, done };
}

/** Whether `a` and `b` are the same as JSON (key order included): configurations, documents. */
export const sameJson = (a, b) => JSON.stringify(a) === JSON.stringify(b);
