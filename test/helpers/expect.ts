/** Shapes and checks every test file shares: error bodies, timestamps, IDs. */
import { expect } from "vitest";
import { ERROR_CODES } from "../../src/errors";

/** `{code, message, cause?}`; for `bad_input`, `cause` lists `{path, message}` per invalid field. */
export type ErrorBody = { code: string; message: string; cause?: Array<{ path: string; message: string }> };

/** RFC 3339 UTC with milliseconds, as every stored timestamp is written. */
export const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** A new ID: 22 characters of base58. */
export const NEW_ID = /^[1-9A-HJ-NP-Za-km-z]{22}$/;
/** A well-formed ID that names nothing. */
export const UNKNOWN_ID = "1111111111111111111111";

/**
 * The response is the error `code` with `status`: exactly `{code, message, cause?}` with one of
 * the ten codes and a message, and, when `path` is given, a `cause` entry for that field.
 */
export function expectError(
  res: { status: number; body: unknown; raw?: string },
  status: number,
  code: string,
  path?: string,
): ErrorBody {
  expect(res.status, res.raw).toBe(status);
  const body = res.body as ErrorBody;
  expect(body.code).toBe(code);
  expect(ERROR_CODES).toContain(body.code);
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  for (const key of Object.keys(body)) expect(["code", "message", "cause"]).toContain(key);
  if (path !== undefined) expect(body.cause?.map((c) => c.path)).toContain(path);
  return body;
}
