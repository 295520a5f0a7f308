/**
 * Free text in requests (API_CONTRACT §17): a string with an unpaired UTF-16 surrogate is
 * `400 bad_input`. The rule is published as the field's `pattern` (the same test as a regular
 * expression, in ECMA-262 syntax with or without the `u` flag) and checked with
 * `isWellFormed()`, which costs one pass and no backtracking on 64 KiB values.
 */
import { z } from "@hono/zod-openapi";

/** A request body is at most 1 MiB (API_CONTRACT §6; src/middleware/body-guard.ts). */
export const MAX_BODY_BYTES = 1024 * 1024;

export const WELL_FORMED_PATTERN = "^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$";
export const WELL_FORMED_MESSAGE = "Must not contain unpaired UTF-16 surrogates.";

/** `schema` (a string schema) that also refuses unpaired surrogates, with the rule in the document. */
export function wellFormed(schema: z.ZodString): z.ZodString {
  return schema
    .refine((value) => (value as string & { isWellFormed(): boolean }).isWellFormed(), WELL_FORMED_MESSAGE)
    .openapi({ pattern: WELL_FORMED_PATTERN });
}

/**
 * A string SPEC.md leaves free (a plain `string`): no limit but the body's. A body of at most
 * MAX_BODY_BYTES holds no longer string, so the published `maxLength` is that bound, not a rule of
 * ours (the document gives every request string one).
 */
export const freeString = () => z.string().max(MAX_BODY_BYTES);

/**
 * An array SPEC.md leaves free: no limit but the body's. Every item takes at least one byte and
 * a comma, so a body of at most MAX_BODY_BYTES holds no more than half as many.
 */
export const freeArray = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_BODY_BYTES / 2);

/**
 * `schema` for an optional field that also takes `null` as "not given" (an engine's fixture may
 * write `"pull_request": null`): the value is handed on as `undefined`, so nothing stores a null.
 */
export const nullAsAbsent = <T extends z.ZodType>(schema: T) =>
  schema
    .nullable()
    .optional()
    .transform((value) => value ?? undefined);

/** Well-formed free text of `min`–`max` characters. */
export const text = (min: number, max: number) => wellFormed(z.string().min(min).max(max));

/** Cloudflare refuses a URL longer than 16 KB before any Worker runs (Workers platform limits). */
export const MAX_URL_BYTES = 16 * 1024;

/**
 * A repeatable query filter SPEC.md leaves free (`x=a&x=b`, or `x=a,b`): the values of `item`, a
 * value given twice counting once wherever it is used. No limit but the URL's: every value takes
 * at least one byte and a separator, so no URL that reaches the Worker holds more than
 * MAX_URL_BYTES / 2, the published `maxItems` (a bound, not a rule of ours).
 */
export function queryList<T extends z.ZodType>(item: T, description: string) {
  const maxItems = MAX_URL_BYTES / 2;
  return (
    z
      .preprocess(
        // A single value arrives as a string, a repeated one as an array; both may hold commas.
        (value) =>
          value === undefined
            ? undefined
            : (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(",")),
        z.array(item).max(maxItems).optional(),
      )
      // Spelled out: the generator reads the preprocessed (unknown) input and drops the bounds.
      .openapi({ param: { style: "form", explode: true }, description, maxItems })
  );
}
