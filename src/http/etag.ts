/**
 * Entity tags (API_CONTRACT §12). A record's ETag is a digest of its JSON representation, the
 * same bytes every caller receives, so it is the same for every caller and changes whenever any
 * field does. The etag middleware tags answers with it; a service checking `If-Match` computes
 * the same digest of the record it is about to change.
 */

import { sha256Hex } from "../lib/hex";

/**
 * `"<32 hex>"` (strong) or `W/"<32 hex>"` (weak): the first 128 bits of SHA-256 of `body` (the
 * UTF-8 bytes of a response, or a text that encodes to them).
 */
export async function etagOf(body: string | ArrayBuffer, weak = false): Promise<string> {
  const hex = await sha256Hex(body, 16);
  return weak ? `W/"${hex}"` : `"${hex}"`;
}

/** The strong ETag of a record, as the response that carries it is tagged. */
export const recordEtag = (record: unknown) => etagOf(JSON.stringify(record));

/** `*`, or the entity tags of an If-Match / If-None-Match header, as written (`W/` kept). */
export type EtagList = "*" | string[];

// RFC 9110 §8.8.3: entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc excludes `"`, space and controls.
const ENTITY_TAG = /\s*((?:W\/)?"[\x21\x23-\x7E\x80-\xFF]*")\s*(?:,|$)/y;

/** Parses a header value; null when it is not `*` or a comma-separated list of entity tags. */
export function parseEtagList(value: string): EtagList | null {
  if (value.trim() === "*") return "*";
  const tags: string[] = [];
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < value.length) {
    const start = ENTITY_TAG.lastIndex;
    const match = ENTITY_TAG.exec(value);
    if (!match?.[1]) {
      // Empty list members (`a, , b`) are allowed by the list syntax.
      const rest = value.slice(start);
      if (/^\s*,/.test(rest)) {
        ENTITY_TAG.lastIndex = start + rest.indexOf(",") + 1;
        continue;
      }
      if (/^\s*$/.test(rest)) break;
      return null;
    }
    tags.push(match[1]);
  }
  return tags.length > 0 ? tags : null;
}

/**
 * A conditional header's entity tags. A value that is neither `*` nor a list of entity tags names
 * no ETag (RFC 9110 §13.1.1, §13.1.2: "Otherwise, the condition is false" for If-Match, "true" for
 * If-None-Match): an If-Match write then matches nothing and is `409` (API_CONTRACT §12), and a
 * GET answers as it would without the header. Neither is a broken request.
 */
export const etagListOf = (value: string): EtagList => parseEtagList(value) ?? [];

const opaque = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);

/** Weak comparison (If-None-Match): the opaque tags are equal, `W/` or not. */
export function weakMatch(list: EtagList, current: string): boolean {
  return list === "*" || list.some((tag) => opaque(tag) === opaque(current));
}

/** Strong comparison (If-Match): neither tag is weak and they are equal. */
export function strongMatch(list: EtagList, current: string): boolean {
  if (list === "*") return true;
  return !current.startsWith("W/") && list.some((tag) => tag === current);
}
