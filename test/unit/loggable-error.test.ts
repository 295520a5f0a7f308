import { describe, expect, it } from "vitest";
import { loggableError } from "../../src/errors";

describe("loggableError", () => {
  it("keeps the driver's message and drops the query's bound parameters", () => {
    const driver = new Error("D1_ERROR: FOREIGN KEY constraint failed: SQLITE_CONSTRAINT");
    const query = new Error(
      'Failed query: insert into "notification_integrations" values (?, ?)\nparams: abc,whsec_TOPSECRETMARKER',
      { cause: driver },
    );
    const text = loggableError(query);
    expect(text).toContain("FOREIGN KEY constraint failed");
    expect(text).not.toContain("TOPSECRETMARKER");
  });

  it("redacts parameters even when the error has no cause", () => {
    const text = loggableError(new Error("Failed query: select 1\nparams: value-MARKER"));
    expect(text).not.toContain("MARKER");
    expect(text).toContain("params: [redacted]");
  });

  it("describes non-errors", () => {
    expect(loggableError("plain")).toBe("plain");
  });
});
