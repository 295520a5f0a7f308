/**
 * The error boundary, beside `ApiError` (Unkey keeps handleError and handleZodError together):
 * `errorResponse` turns any throw into `{code, message, cause?}` with its one status, and
 * `validationHook` turns zod-openapi's validation failures into `bad_input` with one
 * `{path, message}` per invalid field.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import {
  ApiError,
  type ErrorCode,
  type FieldIssue,
  isForeignKeyViolation,
  isIdempotencyKeyTaken,
  isOrganizationMoved,
  limitExceeded,
  limitExceededOf,
  loggableError,
  organizationMoving,
} from "../errors";
import { createLogger } from "../lib/log";
import type { AppEnv } from "./app-env";
import { JSON_CONTENT_TYPE, notJsonBody } from "./raw-body";

type ZodIssueLike = {
  path: PropertyKey[];
  message: string;
  code?: string;
  keys?: string[];
  /** `invalid_union`: each branch's own issues, their paths relative to the union's. */
  errors?: ZodIssueLike[][];
};

/**
 * zod issues → `cause: [{path, message}]`; an unknown key is reported at its own path. A union
 * that failed in exactly one branch of the value's own type (`T | null` given an object with a
 * bad field) reports that branch's issues at their own paths.
 */
export function toFieldIssues(issues: readonly ZodIssueLike[], prefix: string[] = []): FieldIssue[] {
  return issues.flatMap((issue) => {
    const base = [...prefix, ...issue.path.map(String)];
    if (issue.code === "unrecognized_keys" && issue.keys?.length) {
      return issue.keys.map((key) => ({ path: [...base, key].join("."), message: "Unknown field." }));
    }
    if (issue.code === "invalid_union" && issue.errors) {
      const typed = issue.errors.filter(
        (branch) => !branch.every((i) => i.code === "invalid_type" && i.path.length === 0),
      );
      if (typed.length === 1) return toFieldIssues(typed[0] as ZodIssueLike[], base);
    }
    return [{ path: base.join("."), message: issue.message }];
  });
}

const HTTP_EXCEPTION_CODES: Partial<Record<number, ErrorCode>> = {
  400: "bad_input",
  401: "unauthenticated",
  404: "not_found",
  408: "timeout",
  413: "bad_input",
  415: "bad_input",
};

/**
 * RFC 9110 §11.6.1: a 401 names the scheme that would authenticate. `/v1` takes an API key in
 * `x-api-key` (no registered scheme exists for that, so it is named with its header);
 * `/internal/v1` a bearer token. The first is published as the 401's `WWW-Authenticate`
 * (src/openapi/components.ts).
 */
export const API_KEY_CHALLENGE = 'ApiKey realm="deploy-platform-api", header="x-api-key"';
export const BEARER_CHALLENGE = 'Bearer realm="deploy-platform-api internal"';

export function errorResponse(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) {
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    if (err.code === "unauthenticated") {
      c.header(
        "WWW-Authenticate",
        c.req.path.startsWith("/internal/") ? BEARER_CHALLENGE : API_KEY_CHALLENGE,
      );
    }
    return c.json(err.toBody(), err.status);
  }
  if (err instanceof HTTPException && HTTP_EXCEPTION_CODES[err.status]) {
    const code = HTTP_EXCEPTION_CODES[err.status] as ErrorCode;
    // The operation's validator refusing a body for its type: an empty body labelled other than
    // JSON where one is required (src/middleware/body-guard.ts lets an empty body through).
    const contentType = c.req.header("content-type");
    const api =
      code !== "bad_input"
        ? new ApiError(code, err.message)
        : JSON_CONTENT_TYPE.test(contentType ?? "")
          ? new ApiError(code, "The request body must be JSON.")
          : notJsonBody(contentType);
    return c.json(api.toBody(), api.status as ContentfulStatusCode);
  }
  // A write a move's fence refused (API_CONTRACT §32): nothing changed; the retry goes where the
  // organization is now.
  if (isOrganizationMoved(err)) {
    const refusal = organizationMoving();
    for (const [name, value] of Object.entries(refusal.headers ?? {})) c.header(name, value);
    return c.json(refusal.toBody(), refusal.status);
  }
  // A write that would have raised a count of its organization past its limit: the database
  // refused it inside its own batch, so nothing changed (API_CONTRACT §29). Every route that adds
  // to a count meets this, public or internal, whichever service wrote the row.
  const limit = limitExceededOf(err);
  if (limit !== undefined) {
    const refusal = limitExceeded(limit);
    return c.json(refusal.toBody(), refusal.status);
  }
  // A write whose parent vanished meanwhile (a create racing the delete of its project, say):
  // the parent is gone, so the answer is what it would be a moment later (API_CONTRACT §17).
  // Every write goes through D1, which enforces the foreign keys, so this one place covers all.
  if (isForeignKeyViolation(err)) {
    return c.json(
      { code: "not_found", message: "The record this request writes under no longer exists." },
      404,
    );
  }
  // A keyed write that met its own Idempotency-Key, committed by an earlier execution: nothing
  // ran twice. The idempotency middleware answers what that execution did instead of this.
  if (isIdempotencyKeyTaken(err)) {
    return c.json({ code: "conflict", message: "This Idempotency-Key's request was already executed." }, 409);
  }
  // Only the innermost message and the stack frames: the outer message of a query error
  // carries its bound parameters, which may be secrets.
  const log = c.get("ctx")?.log ?? createLogger({});
  log.error("unhandled error", {
    error: loggableError(err),
    stack: err.stack
      ?.split("\n")
      .filter((line) => /^\s+at /.test(line))
      .join("\n"),
  });
  return c.json({ code: "internal", message: "Internal error; a retry may succeed." }, 500);
}

/** zod-openapi's `defaultHook`: a failed validation of params, query or body is `bad_input`. */
export function validationHook(
  result: { success: true } | { success: false; error: { issues: readonly ZodIssueLike[] } },
) {
  if (!result.success) {
    throw new ApiError("bad_input", "The request is not valid.", toFieldIssues(result.error.issues));
  }
}
