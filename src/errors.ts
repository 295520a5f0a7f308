/**
 * `ApiError` and the ten error codes of SPEC.md: what services and the database layer throw.
 * No HTTP framework here; src/http/error-handler.ts turns an `ApiError` into its response.
 */

/** The ten error codes of SPEC.md, and the one status each maps to. */
export const ERROR_STATUS = {
  bad_input: 400,
  unauthenticated: 401,
  unauthorized: 403,
  forbidden: 403,
  not_found: 404,
  timeout: 408,
  conflict: 409,
  rate: 429,
  internal: 500,
  not_implemented: 501,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];
export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

export type FieldIssue = { path: string; message: string };

/** The one error type services throw; the app's onError turns it into `{code, message, cause?}`. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  override readonly cause?: unknown;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, cause?: unknown, headers?: Record<string, string>) {
    super(message);
    this.name = "ApiError";
    this.code = code;
    this.cause = cause;
    this.headers = headers;
  }

  get status(): ErrorStatus {
    return ERROR_STATUS[this.code];
  }

  /**
   * The body. A `cause` list longer than MAX_CAUSES keeps its first MAX_CAUSES items, and the
   * message says how many there were: a body of a million bad lines gets an answer of a page, not
   * of megabytes.
   */
  toBody(): { code: ErrorCode; message: string; cause?: unknown } {
    if (this.cause === undefined) return { code: this.code, message: this.message };
    if (Array.isArray(this.cause) && this.cause.length > MAX_CAUSES) {
      const message = `${this.message} (The first ${MAX_CAUSES} of ${this.cause.length} problems are listed.)`;
      return { code: this.code, message, cause: this.cause.slice(0, MAX_CAUSES) };
    }
    return { code: this.code, message: this.message, cause: this.cause };
  }
}

/** The most items an error's `cause` lists. */
export const MAX_CAUSES = 100;

export const badInput = (message: string, cause?: FieldIssue[] | unknown) =>
  new ApiError("bad_input", message, cause);
export const notFound = (what = "Resource") => new ApiError("not_found", `${what} not found.`);
export const conflict = (message: string, cause?: unknown) => new ApiError("conflict", message, cause);
export const forbidden = (message = "Your role does not allow this action.") =>
  new ApiError("forbidden", message);

/**
 * D1 reports constraint failures only through the message text. A write that meets its own
 * Idempotency-Key already committed is not a clash of the caller's data: see below.
 */
export function isUniqueViolation(err: unknown): boolean {
  const text = errorText(err);
  return (
    /UNIQUE constraint failed|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/i.test(text) &&
    !IDEMPOTENCY_KEY_TAKEN.test(text)
  );
}

/** The audit log's unique index of Idempotency-Keys (src/db/audit-table.ts), as D1 names it. */
const IDEMPOTENCY_KEY_TAKEN =
  /UNIQUE constraint failed: audit_log\.actor_api_key_id, audit_log\.idempotency_key/;

/** A write whose Idempotency-Key already committed with an earlier execution (API_CONTRACT §11). */
export function isIdempotencyKeyTaken(err: unknown): boolean {
  return IDEMPOTENCY_KEY_TAKEN.test(errorText(err));
}

/**
 * The limit (API_CONTRACT §29) whose count a write would have raised past it, or undefined: the
 * database refuses such a write by aborting its batch with `limit exceeded: <name>` (migration
 * 0015's triggers; src/services/orgs/limits.ts). Read from the driver's own error, never from a
 * wrapper whose message carries the statement's parameters (which a caller chose).
 */
export function limitExceededOf(err: unknown): string | undefined {
  return /\blimit exceeded: ([a-z_]+)/.exec(innermostMessage(err))?.[1];
}

/** The `409` of a request that would make a count exceed its limit (API_CONTRACT §29). */
export function limitExceeded(name: string): ApiError {
  const message = `The organization's \`${name}\` limit is reached: this request would exceed it, so nothing changed (GET /v1/orgs/{org_id}/limits shows each limit and what it counts).`;
  return conflict(message, [{ path: `limits.${name}`, message: `Would exceed the \`${name}\` limit.` }]);
}

/**
 * Whether `err` is a move's fence refusing a write (API_CONTRACT §32): during the switch, an
 * organization's database refuses every write of it in the statement itself (migration 0017's
 * triggers abort with `organization moved`), so the write's whole batch changed nothing.
 */
export function isOrganizationMoved(err: unknown): boolean {
  return /\borganization moved\b/.test(innermostMessage(err));
}

/** How long a write refused by a move's fence is told to wait before it tries again. */
export const MOVED_RETRY_AFTER_S = 1;

/**
 * The `408` of a write a move's fence refused, whatever route it was: it executed nothing, so it is
 * not stored for its Idempotency-Key (src/idempotency/middleware.ts), and the isolate forgets where
 * the organization was (src/middleware/auth.ts, ./middleware/internal-database.ts), so the retry
 * finds where it is now.
 */
export function organizationMoving(): ApiError {
  return new ApiError(
    "timeout",
    "The organization is moving to another database: nothing changed. Try again after Retry-After seconds.",
    undefined,
    { "Retry-After": String(MOVED_RETRY_AFTER_S) },
  );
}

function innermostMessage(err: unknown): string {
  let inner: unknown = err;
  for (let depth = 0; inner instanceof Error && inner.cause !== undefined && depth < 5; depth++) {
    inner = inner.cause;
  }
  return inner instanceof Error ? inner.message : String(inner);
}

export function isForeignKeyViolation(err: unknown): boolean {
  return /FOREIGN KEY constraint failed|SQLITE_CONSTRAINT_FOREIGNKEY/i.test(errorText(err));
}

function errorText(err: unknown): string {
  let text = "";
  let current: unknown = err;
  // Drizzle wraps the driver error; walk the cause chain.
  for (let depth = 0; current && depth < 5; depth++) {
    if (current instanceof Error) {
      text += ` ${current.message}`;
      current = current.cause;
    } else {
      text += ` ${String(current)}`;
      break;
    }
  }
  return text;
}

/** Refuses (400 bad_input) an echoed identifying field that does not match the record. */
export function assertEchoMatches(body: Record<string, unknown>, actual: Record<string, unknown>): void {
  const issues = Object.entries(actual)
    .filter(([field, value]) => body[field] !== undefined && body[field] !== value)
    .map(([field]) => ({ path: field, message: "Read-only: must match the record (or be left out)." }));
  if (issues.length > 0) throw badInput("A read-only field does not match the record.", issues);
}

/**
 * A loggable description of an error: the innermost cause's message, never the bound
 * parameters of a query (Drizzle's query errors append `params: …`, which can hold a
 * signing secret or a variable value).
 */
export function loggableError(err: unknown): string {
  let inner: unknown = err;
  for (let depth = 0; inner instanceof Error && inner.cause !== undefined && depth < 5; depth++) {
    inner = inner.cause;
  }
  const text = inner instanceof Error ? `${inner.name}: ${inner.message}` : String(inner);
  return text.replace(/params:[\s\S]*$/i, "params: [redacted]");
}
