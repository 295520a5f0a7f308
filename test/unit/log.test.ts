/** The one logger: a JSON line per entry, with the fields it was made with on every line. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../src/lib/log";

afterEach(() => vi.restoreAllMocks());

describe("createLogger", () => {
  it("writes one JSON line per entry, at the console level of the entry, with its base fields", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const info = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const log = createLogger({ request_id: "r-1" });
    log.error("broke", { id: 7 });
    log.warn("odd");
    log.info("fine");
    expect(error.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
      { level: "error", msg: "broke", request_id: "r-1", id: 7 },
    ]);
    expect(JSON.parse(String(warn.mock.calls[0]?.[0]))).toEqual({
      level: "warn",
      msg: "odd",
      request_id: "r-1",
    });
    expect(JSON.parse(String(info.mock.calls[0]?.[0]))).toEqual({
      level: "info",
      msg: "fine",
      request_id: "r-1",
    });
  });

  it("`with` adds fields to every entry and leaves the parent as it was", () => {
    const error = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const parent = createLogger({ request_id: "r-2" });
    parent.with({ message_id: "m-1" }).error("child");
    parent.error("parent");
    expect(error.mock.calls.map(([line]) => JSON.parse(String(line)))).toEqual([
      { level: "error", msg: "child", request_id: "r-2", message_id: "m-1" },
      { level: "error", msg: "parent", request_id: "r-2" },
    ]);
  });
});
