/**
 * A stored answer's body is sealed with the API key that made the request. Some answers carry a
 * secret shown only once: a new API key's `key` (API_CONTRACT §21; §5 keeps keys only as their
 * hash) and a new integration's signing secret. §11 replays the first answer for 24 h, so that
 * body has to be kept; kept sealed, it is readable only by a request that presents the same key,
 * which a replay does (the answers are kept under that key in its family's limiter object), and
 * never by whoever reads the object's storage.
 *
 * - AES-256-GCM (WebCrypto), under a key derived with HKDF-SHA-256 from the presented API key:
 *   the server keeps no key that opens it.
 * - A fresh random 96-bit IV per answer.
 * - The Idempotency-Key and the request's fingerprint are the additional authenticated data: a
 *   body copied onto another entry does not open.
 *
 * Envelope (the stored text): `sealed.v1.<base64 IV>.<base64 ciphertext‖tag>`. A body without the
 * prefix was stored before answers were sealed (a JSON body starts with `{`): it is answered as
 * it is, for the 24 h such an entry can still live.
 */
import { decodeBase64, encodeBase64 } from "hono/utils/encode";
import { aesGcmKey } from "../crypto/variables";
import type { ClaimOutcome, IdempotencyClaim, Settlement, StoredAnswer } from "./store";

const PREFIX = "sealed.v1.";
const HKDF_SALT = new TextEncoder().encode("deploy-platform/idempotency-answer");
const CIPHER_INFO = new TextEncoder().encode("idempotency-answer/aes-256-gcm/v1");
const IV_BYTES = 12;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The stored body cannot be opened (altered, or sealed under another key or entry). */
export class SealedAnswerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SealedAnswerError";
  }
}

function isSealed(body: string): boolean {
  return body.startsWith(PREFIX);
}

/** Seals and opens the answer bodies of one claim, under the API key its request presented. */
export type AnswerSeal = {
  /** The settlement as it is stored: its body sealed. */
  seal(answer: Settlement): Promise<Settlement>;
  /** The claim's outcome as the request uses it: a replayed body opened. Throws SealedAnswerError. */
  open(outcome: ClaimOutcome): Promise<ClaimOutcome>;
};

export function answerSeal(apiKey: string, claim: IdempotencyClaim): AnswerSeal {
  let cipherKey: Promise<CryptoKey> | undefined;
  const key = () => {
    cipherKey ??= crypto.subtle
      .importKey("raw", encoder.encode(apiKey), "HKDF", false, ["deriveKey"])
      .then((ikm) => aesGcmKey(ikm, HKDF_SALT, CIPHER_INFO));
    return cipherKey;
  };
  const additionalData = encoder.encode(`${claim.key}\n${claim.fingerprint}`);

  async function sealBody(body: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData },
      await key(),
      encoder.encode(body),
    );
    return `${PREFIX}${encodeBase64(iv.buffer)}.${encodeBase64(sealed)}`;
  }

  async function openBody(stored: string): Promise<string> {
    if (!isSealed(stored)) return stored;
    const [iv, sealed] = stored.slice(PREFIX.length).split(".");
    if (!iv || !sealed) throw new SealedAnswerError("The stored answer is not a sealed envelope.");
    try {
      const opened = await crypto.subtle.decrypt(
        { name: "AES-GCM", iv: decodeBase64(iv), additionalData },
        await key(),
        decodeBase64(sealed),
      );
      return decoder.decode(opened);
    } catch {
      throw new SealedAnswerError("The stored answer does not open under this request's key and entry.");
    }
  }

  return {
    async seal(answer) {
      if (answer === null || answer === "lapsed" || answer.body === null) return answer;
      return { ...answer, body: await sealBody(answer.body) };
    },
    async open(outcome) {
      if (outcome.state !== "replay" || outcome.answer.body === null) return outcome;
      const answer: StoredAnswer = { ...outcome.answer, body: await openBody(outcome.answer.body) };
      return { state: "replay", answer };
    },
  };
}
