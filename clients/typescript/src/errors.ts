import type { components } from "./schema.js";

/** The API's error body: `code` is one of the ten the API answers. */
export type ApiErrorBody = components["schemas"]["Error"];

/**
 * The code of an error answer that did not carry the API's `{code, message}` body: an empty body,
 * or a page from a proxy or load balancer in front of the API. The HTTP status is on the error.
 */
export const NO_ERROR_BODY = "no_error_body";

/** An error answer without the API's body: `cause` holds what the body said, if anything. */
export type NoErrorBody = { code: typeof NO_ERROR_BODY; message: string; cause?: unknown };

/** A failed call, with the API's `{code, message, cause}` and the request's `x-request-id`. */
export class ApiError extends Error {
  readonly requestId: string | null;
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | NoErrorBody,
    response?: Response,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = "ApiError";
    this.requestId = response?.headers.get("x-request-id") ?? null;
  }

  /** The error of an openapi-fetch result that is not a success. */
  static from(result: { error?: unknown; response: Response }): ApiError {
    const { status } = result.response;
    const body = result.error;
    if (typeof body === "object" && body !== null && "code" in body && "message" in body)
      return new ApiError(status, body as ApiErrorBody, result.response);
    const raw = typeof body === "string" ? body.trim().slice(0, 1000) : body;
    const fallback: NoErrorBody = { code: NO_ERROR_BODY, message: `HTTP ${status} without an error body` };
    if (raw !== undefined && raw !== "") fallback.cause = raw;
    return new ApiError(status, fallback, result.response);
  }
}

type Result<T> = { data?: T; error?: unknown; response: Response };

/**
 * `data` of a success, else the call's `ApiError` thrown. `undefined` for a success without a body
 * (`204 No Content`, such as a key's `DELETE`) and for a `304 Not Modified` (a `GET` sent with
 * `If-None-Match`: what you hold is current); `response.status` tells them apart.
 */
export function unwrap<T>(result: Result<T>): T | undefined {
  if (result.response.ok || result.response.status === 304) return result.data;
  throw ApiError.from(result);
}

/**
 * `data` of a call that must answer one: the package's own calls, which never send
 * `If-None-Match`. A success without a body is an answer this client cannot use: an `Error`.
 */
export function unwrapData<T>(result: Result<T>): Exclude<T, undefined> {
  const data = unwrap(result);
  if (data === undefined)
    throw new Error(
      `${result.response.url || "the API"} answered HTTP ${result.response.status} without the body expected`,
    );
  return data as Exclude<T, undefined>;
}
