import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { badInput } from "../errors";
import type { AppEnv } from "../http/app-env";
import { JSON_CONTENT_TYPE, notJsonBody, readRawBody } from "../http/raw-body";

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * JSON only, UTF-8 only, at most 1 MiB, nested at most 64 levels, no key twice in one object, no
 * unpaired UTF-16 surrogate in any key or string (API_CONTRACT §6, §17, §22), no number beyond a
 * 64-bit float's range, checked before
 * anything executes. The body is read once (src/http/raw-body.ts: whole within the time
 * allowed, no more than 1 MiB of it kept) and handed to the validators via Hono's body cache, so
 * it is never read twice.
 */
export const bodyGuard = createMiddleware<AppEnv>(async (c, next) => {
  if (!BODY_METHODS.has(c.req.method)) return next();
  // A charset other than UTF-8 is refused whether a body came or not (§17: before anything
  // executes): a bodyless DELETE, cancel or rotate-secret labelled `charset=utf-16` runs nothing.
  const declaredType = c.req.header("content-type");
  if (declaredType) assertUtf8Charset(declaredType);
  if (!c.req.raw.body) return next();

  const bytes = await readRawBody(c);
  // Hono keeps body promises in this cache (its declared type says otherwise).
  const cache = c.req.bodyCache as unknown as Record<string, Promise<unknown>>;
  const contentType = c.req.header("content-type") ?? "";
  if (bytes.byteLength === 0) {
    // No body (a bare `POST`, `content-length: 0`, an empty body labelled JSON) is an empty
    // object: an optional body takes its defaults, a required one names its missing fields (an
    // empty body labelled anything else is refused as not JSON). The cache answers whoever asks
    // next: the validators would otherwise read a stream this guard has already drained (a 500).
    cache.arrayBuffer = Promise.resolve(new ArrayBuffer(0));
    // Hono's `json()` parses the cached text.
    const json = JSON_CONTENT_TYPE.test(contentType);
    cache.text = Promise.resolve(json ? "{}" : "");
    if (json) canonicalContentType(c, contentType);
    return next();
  }

  if (!JSON_CONTENT_TYPE.test(contentType)) {
    throw notJsonBody(contentType);
  }
  assertUtf8Charset(contentType);
  canonicalContentType(c, contentType);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badInput("The request body is not valid JSON.");
  }
  // Before parsing: nothing downstream (validation, JSON.stringify into D1) meets a value
  // deep enough to exhaust the stack.
  const duplicate = scanJson(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw badInput("The request body is not valid JSON.");
  }
  // A proxy that reads the first of two values must never see another request than this service.
  if (duplicate !== undefined) {
    throw badInput("The request body holds the same key twice in one object.", [
      { path: wellFormedPath(duplicate), message: "Duplicate key: each key may appear once in an object." },
    ]);
  }
  assertWellFormed(parsed);
  cache.json = Promise.resolve(parsed);
  cache.text = Promise.resolve(text);
  return next();
});

/** The media-type grammar @hono/zod-openapi's body gate reads (no space before `;`, no empty parameter). */
const GATE_JSON_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * RFC 9110 allows spaces around `;` and an empty parameter (`application/json ; charset=utf-8`,
 * `application/json;`), which the route's media-type gate would refuse. The request it sees next
 * carries the same media type in the form it reads; the body is already in Hono's cache.
 */
function canonicalContentType(c: Context<AppEnv>, contentType: string): void {
  if (GATE_JSON_TYPE.test(contentType)) return;
  const headers = new Headers(c.req.raw.headers);
  const parts = contentType.split(";").map((part) => part.trim());
  headers.set("content-type", parts.filter((part) => part !== "").join("; "));
  c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers });
}

/** The body's own object or array is level 1; each nested object or array adds one. */
export const MAX_JSON_DEPTH = 64;

/** A `charset` parameter, if given, must be utf-8 (case-insensitive, quoted or not). */
function assertUtf8Charset(contentType: string): void {
  for (const param of contentType.split(";").slice(1)) {
    const eq = param.indexOf("=");
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    const value = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
    if (value !== "utf-8") {
      throw badInput("Request bodies must be UTF-8.", [
        { path: "header.content-type", message: `Unsupported charset "${value}"; send utf-8.` },
      ]);
    }
  }
}

const OPEN = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;

/** An object or array the scan is inside: an object's keys so far and the member being read, an array's index. */
type Frame = { keys: Set<string> | null; key: string; index: number; expectKey: boolean };

/**
 * One pass over the text, before it is parsed (no recursion, so a 20,000-deep value is refused as
 * cheaply as any): refuses nesting deeper than MAX_JSON_DEPTH at once, and returns the path of
 * the first key an object holds twice (API_CONTRACT §22), which `JSON.parse` would silently take
 * the last of. The text may not be JSON at all: the caller parses it next and reports that first.
 */
function scanJson(text: string): string | undefined {
  const stack: Frame[] = [];
  let duplicate: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (ch === QUOTE) {
      const start = i;
      for (i++; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
      if (top?.keys && top.expectKey && duplicate === undefined) {
        const key = keyText(text, start, i);
        if (key !== undefined && top.keys.has(key)) duplicate = pathOf(stack, key);
        else if (key !== undefined) top.keys.add(key);
        top.key = key ?? "";
      }
    } else if (ch === OPEN || ch === OPEN_ARRAY) {
      if (stack.length >= MAX_JSON_DEPTH) {
        // The value that opens level 65, named as every cause names a field (API_CONTRACT §6).
        const at = stack.map((frame) => (frame.keys ? frame.key : String(frame.index))).join(".");
        throw badInput(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`, [
          { path: wellFormedPath(at), message: `Nested deeper than ${MAX_JSON_DEPTH} levels.` },
        ]);
      }
      stack.push({ keys: ch === OPEN ? new Set() : null, key: "", index: 0, expectKey: ch === OPEN });
    } else if (ch === CLOSE || ch === CLOSE_ARRAY) {
      stack.pop();
    } else if (ch === COLON && top) {
      top.expectKey = false;
    } else if (ch === COMMA && top) {
      if (top.keys) top.expectKey = true;
      else top.index++;
    }
  }
  return duplicate;
}

/** The key a JSON string token spells (escapes decoded), or undefined when it is no valid string. */
function keyText(text: string, start: number, end: number): string | undefined {
  const raw = text.slice(start + 1, end);
  if (!raw.includes("\\")) return raw;
  try {
    return JSON.parse(text.slice(start, end + 1)) as string;
  } catch {
    return undefined;
  }
}

/** The dotted path of `key` inside the innermost open object: `configuration.changelog`, `data.patch.0.op`. */
function pathOf(stack: Frame[], key: string): string {
  const parts = stack.slice(0, -1).map((frame) => (frame.keys ? frame.key : String(frame.index)));
  return [...parts, key].join(".");
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Every key and string value is well-formed UTF-16, and every number one a JSON number can stand
 * for here: `1e400` parses to Infinity, which JSON cannot write back (it would be stored as
 * `null`, in a field that takes any JSON value). The first offender is named by its path.
 */
function assertWellFormed(value: unknown): void {
  // Depth is already bounded, but a queue keeps this off the JS stack all the same.
  const queue: { value: unknown; path: string }[] = [{ value, path: "" }];
  for (let item = queue.pop(); item; item = queue.pop()) {
    const { value: v, path } = item;
    if (typeof v === "string") {
      if (LONE_SURROGATE.test(v)) throw unpaired(path);
    } else if (typeof v === "number") {
      if (!Number.isFinite(v)) throw unrepresentable(path);
    } else if (Array.isArray(v)) {
      for (const [i, entry] of v.entries()) queue.push({ value: entry, path: join(path, String(i)) });
    } else if (v !== null && typeof v === "object") {
      for (const [key, entry] of Object.entries(v)) {
        const at = join(path, key);
        if (LONE_SURROGATE.test(key)) throw unpaired(at, "key");
        queue.push({ value: entry, path: at });
      }
    }
  }
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

/** A path names a key with U+FFFD in place of its surrogate: the answer itself stays well-formed. */
const wellFormedPath = (path: string) => path.replace(LONE_SURROGATES, "\uFFFD");

const unrepresentable = (path: string) =>
  badInput("Numbers must be finite.", [
    {
      path: wellFormedPath(path),
      message: "The number is beyond what a 64-bit float holds (±1.7976931348623157e308).",
    },
  ]);

const unpaired = (path: string, what = "value") =>
  badInput("Strings must be well-formed Unicode.", [
    { path: wellFormedPath(path), message: `The ${what} contains an unpaired UTF-16 surrogate.` },
  ]);
