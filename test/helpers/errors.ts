/** Shared by the tests of the error model and cross-cutting HTTP behaviour (test/properties/errors/; API_CONTRACT §6, §9 auth). */
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { type ApiResponse, expectNoSniff } from "./api";
import { expectError as expectErrorBody } from "./expect";
import { expectDocumentedResponse } from "./openapi";

export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
export const MIB = 1024 * 1024;

/**
 * Every failure answers exactly `{code, message, cause?}` with one of the ten codes (`expectError`
 * of ./expect), as JSON, with a request id.
 */
export function expectErrorResponse(res: ApiResponse<unknown>, status: number, code: string) {
  expectErrorBody(res, status, code);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("x-request-id")).toMatch(REQUEST_ID);
}

/**
 * A raw request to the Worker: any body bytes, any headers. Its answer is checked as `request`'s
 * are: against /openapi.json, and for `X-Content-Type-Options`.
 */
export async function raw(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: BodyInit } = {},
): Promise<ApiResponse<unknown>> {
  const res = await exports.default.fetch(
    new Request(`http://api.test${path}`, { method, headers: init.headers, body: init.body }),
  );
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  const response = { status: res.status, body, headers: res.headers, raw: text };
  expectNoSniff(method, path, response);
  await expectDocumentedResponse(method, path, response);
  return response;
}
