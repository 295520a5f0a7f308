/**
 * Idempotency-Key (API_CONTRACT §11), on the way in: which requests claim a key, and what the
 * claim learned. The key is claimed in the same RateLimiter call as the rate-limit decision (one
 * round trip, src/middleware/rate-limit.ts), so hashing the body needs the raw bytes before the
 * body guard runs: the claim reads them through `readRawBody`, which keeps them for the guard. A
 * body that cannot be read (over 1 MiB) claims nothing: the body guard refuses the request before
 * anything executes, and a refused request neither uses nor stores a key.
 */
import type { Context } from "hono";
import { loggableError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { readRawBody } from "../http/raw-body";
import { sha256Hex } from "../lib/hex";
import { unreplayableAnswer } from "./executed";
import { answerSeal, SealedAnswerError } from "./sealed";
import type { ClaimOutcome, IdempotencyClaim, Settlement } from "./store";

export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;
export const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** What the request's claim came to, for the idempotency middleware (./middleware.ts). */
export type IdempotencyState = {
  claim: IdempotencyClaim;
  /** The limiter's answer to the claim; absent when the limiter could not be reached. */
  outcome?: ClaimOutcome;
  /** Stores the request's answer, releases the key (`null`) or lets it lapse: the object's second call. */
  settle(answer: Settlement): Promise<void>;
  /**
   * Set once the request has passed every check of its form (scope, headers, the body guard)
   * and reaches its route (`routeBegins`): from here it executes, and the key keeps its answer.
   */
  routeBegan?: true;
};

declare module "hono" {
  interface ContextVariableMap {
    /** The request's Idempotency-Key claim (/v1 writes that carry one). */
    idempotency?: IdempotencyState;
  }
}

/**
 * The claim of a request that carries a well-formed Idempotency-Key on a write method, with
 * its fingerprint: SHA-256 of the method, the path with query string, and the SHA-256 of the
 * raw body. Undefined for every other request (which then costs what it always did).
 */
export async function idempotencyClaim(c: Context<AppEnv>): Promise<IdempotencyClaim | undefined> {
  if (!WRITE_METHODS.has(c.req.method)) return undefined;
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined || !KEY_PATTERN.test(key)) return undefined;
  let body: Uint8Array;
  try {
    body = await readRawBody(c);
  } catch {
    return undefined;
  }
  const url = new URL(c.req.url);
  const bodyHash = await sha256Hex(body);
  const fingerprint = await sha256Hex(`${c.req.method}\n${url.pathname}${url.search}\n${bodyHash}`);
  return { key, fingerprint };
}

/**
 * Keeps what the limiter answered to the request's claim, for the idempotency middleware, with
 * the answer bodies it stores sealed and those it replays opened under the request's API key
 * (./sealed.ts), or under `credential` for the operation that takes none (the token exchange's
 * ID token). `store` is the limiter's second call. A replayed body that does not open (the
 * object's storage altered) is answered as an execution whose answer was lost: a 409, never a
 * second execution.
 */
export async function holdClaim(
  c: Context<AppEnv>,
  claim: IdempotencyClaim,
  outcome: ClaimOutcome | undefined,
  store: (answer: Settlement) => Promise<void>,
  credential = c.req.header("x-api-key") ?? "",
): Promise<void> {
  const seal = answerSeal(credential, claim);
  let opened = outcome;
  if (outcome) {
    try {
      opened = await seal.open(outcome);
    } catch (err) {
      if (!(err instanceof SealedAnswerError)) throw err;
      c.get("ctx").log.error("idempotency answer does not open", { error: loggableError(err) });
      opened = {
        state: "replay",
        answer: unreplayableAnswer("was executed, but its stored answer cannot be read"),
      };
    }
  }
  c.set("idempotency", {
    claim,
    settle: async (answer) => store(await seal.seal(answer)),
    ...(opened ? { outcome: opened } : {}),
  });
}
