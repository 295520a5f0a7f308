/**
 * One delivery attempt over HTTP: the Standard Webhooks request (or Slack's `{ text }`),
 * a timeout, no redirects, and an outcome that never throws.
 */
import type { IntegrationType } from "../db/schema";
import { parseRetryAfter } from "./retry";
import { signWebhook } from "./signing";
import { slackText } from "./slack";
import { checkWebhookUrl } from "./url-guard";

export const DELIVERY_TIMEOUT_MS = 15_000;

/** Every failure to reach a receiver that is not a timeout: unresolved, refused, reset, TLS. */
export const NETWORK_ERROR = "Network error: the receiver could not be reached, or the connection failed.";

/** `signingSecrets`: the newest first; each adds a `v1,` signature (rotation overlap). */
export type DeliveryTarget = { type: IntegrationType; url: string; signingSecrets: readonly string[] };
export type DeliveredEvent = { id: string; type: string; createdAt: string; data: Record<string, unknown> };

export type AttemptOutcome = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  retryAfterSeconds?: number;
};

/** The exact body and headers of one attempt; `timestamp` is the attempt time in unix seconds. */
export async function buildWebhookRequest(
  target: DeliveryTarget,
  event: DeliveredEvent,
  timestamp: number,
): Promise<{ body: string; headers: Record<string, string> }> {
  const body =
    target.type === "slack"
      ? JSON.stringify({ text: slackText(event) })
      : JSON.stringify({ type: event.type, timestamp: event.createdAt, data: event.data });
  return {
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "deploy-platform-webhooks/1",
      // The event's ID, the same for every integration and retry, so receivers can deduplicate.
      "webhook-id": event.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": await signWebhook(target.signingSecrets, event.id, timestamp, body),
    },
  };
}

export async function attemptDelivery(
  target: DeliveryTarget,
  event: DeliveredEvent,
  opts: { allowInsecure: boolean; timeoutMs?: number },
): Promise<AttemptOutcome> {
  return attemptPost(target.url, opts, (timestamp) => buildWebhookRequest(target, event, timestamp));
}

/**
 * One signed POST of a message that is not an event (an audit stream's batch, API_CONTRACT §30):
 * the Standard Webhooks headers over `body`, `id` the message's `webhook-id`.
 */
export function attemptSignedPost(
  url: string,
  message: { id: string; body: string; contentType: string; signingSecrets: readonly string[] },
  opts: { allowInsecure: boolean; timeoutMs?: number },
): Promise<AttemptOutcome> {
  return attemptPost(url, opts, async (timestamp) => ({
    body: message.body,
    headers: {
      "content-type": message.contentType,
      "user-agent": "deploy-platform-webhooks/1",
      "webhook-id": message.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": await signWebhook(message.signingSecrets, message.id, timestamp, message.body),
    },
  }));
}

/** The attempt itself: the URL checked again, a timeout, no redirects, an outcome that never throws. */
async function attemptPost(
  url: string,
  opts: { allowInsecure: boolean; timeoutMs?: number },
  build: (timestamp: number) => Promise<{ body: string; headers: Record<string, string> }>,
): Promise<AttemptOutcome> {
  const started = Date.now();
  const elapsed = () => Date.now() - started;
  // Checked again at send time: the rules may have tightened since the URL was stored.
  const check = checkWebhookUrl(url, { allowInsecure: opts.allowInsecure });
  if (!check.ok) return { ok: false, statusCode: null, error: `URL refused: ${check.reason}`, durationMs: 0 };
  try {
    const { body, headers } = await build(Math.floor(started / 1000));
    const res = await fetch(check.url, {
      method: "POST",
      headers,
      body,
      // A redirect could lead anywhere, including inside; a 3xx is a failed attempt.
      redirect: "manual",
      signal: AbortSignal.timeout(opts.timeoutMs ?? DELIVERY_TIMEOUT_MS),
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    const outcome: AttemptOutcome = {
      ok,
      statusCode: res.status,
      error: ok ? null : `HTTP ${res.status}`,
      durationMs: elapsed(),
    };
    const retryAfter = ok ? undefined : parseRetryAfter(res.headers.get("retry-after"), Date.now());
    if (retryAfter !== undefined) outcome.retryAfterSeconds = retryAfter;
    return outcome;
  } catch (err) {
    // The class of failure, never the network's own message: that names what the Worker can
    // and cannot reach (a resolver's answer, a refused port, a peer's reset), which would turn a
    // test send, answered at once, into a probe of the network around it.
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    const error = timedOut ? `Timed out after ${opts.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms.` : NETWORK_ERROR;
    return { ok: false, statusCode: null, error, durationMs: elapsed() };
  }
}
