import type { components } from "./schema.js";

export type ApiErrorBody = components["schemas"]["Error"];

/** A failed call, with the API's `{code, message, cause}` and the request's `x-request-id`. */
export class ApiError extends Error {
  readonly requestId: string | null;
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
    response?: Response,
  ) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = "ApiError";
    this.requestId = response?.headers.get("x-request-id") ?? null;
  }

  /** The error of an openapi-fetch result that has no `data`. */
  static from(result: { error?: unknown; response: Response }): ApiError {
    const body = result.error;
    const known =
      typeof body === "object" && body !== null && "code" in body && "message" in body
        ? (body as ApiErrorBody)
        : {
            code: codeOf(result.response.status),
            message: `HTTP ${result.response.status} without an error body`,
          };
    return new ApiError(result.response.status, known as ApiErrorBody, result.response);
  }
}

/** The error code an answer's status stands for, when a proxy answered without the API's body. */
function codeOf(status: number): ApiErrorBody["code"] {
  const codes: Record<number, ApiErrorBody["code"]> = {
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    408: "timeout",
    409: "conflict",
    429: "rate",
    501: "not_implemented",
  };
  return codes[status] ?? (status >= 500 ? "internal" : "bad_input");
}

/** `data`, or the call's `ApiError` thrown. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) throw ApiError.from(result);
  return result.data;
}
