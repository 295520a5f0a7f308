/**
 * The zod building blocks of request and record fields, each with what it publishes in
 * /openapi.json: identifiers, timestamps, free text (API_CONTRACT §17: no unpaired UTF-16
 * surrogate), instants, bounds SPEC.md leaves to the body, and the read-only fields a replace
 * may echo back.
 */
import * as z from "zod";
import { MAX_BODY_BYTES } from "../http/raw-body";
import { ID_PATTERN } from "../lib/ids";
import { once } from "../lib/once";
import { NAME_PATTERN, nameProblem } from "../lib/readable-name";

const idString = () =>
  z.string().regex(ID_PATTERN, "Must be an identifier (22-char base58, UUID, or 32-char lowercase hex).");
// The pattern bounds the length (a UUID is the longest form); published for clients. Described
// once, as `components.schemas.Id`, and referenced by every identifier (~100 of them).
export const IdSchema = idString().openapi("Id", { example: "7Hq3VnT5m2WcXbQ9pLk4Rz", maxLength: 36 });
/**
 * The same identifier written out inline: for the few request fields that add a description or
 * `null` to it, which would otherwise be an `allOf` around the reference that the OWASP lint of
 * requests (`npm run lint:openapi`) cannot see through.
 */
export const InlineIdSchema = idString().openapi({ example: "7Hq3VnT5m2WcXbQ9pLk4Rz", maxLength: 36 });
/**
 * An identifier or `null`, described once as `components.schemas.NullableId`: an audit entry's
 * organization, project and actor, a variable version's actor. `IdSchema.nullable()` would publish
 * an `allOf` that no `null` passes, or `Id` itself as nullable everywhere when such a use is the
 * first the generator meets (test/properties/openapi/nullable.test.ts).
 */
export const NullableIdSchema = InlineIdSchema.nullable().openapi("NullableId");

/** A template's name (API_CONTRACT §17): any string of 1–255 characters, not an identifier. */
export const TemplateIdSchema = z.string().min(1).max(255).openapi({
  description: "The template's name, chosen by the engine (1–255 characters).",
  example: "tpl-web-1",
});

/** API_CONTRACT: every timestamp is RFC 3339 UTC with milliseconds; the pattern publishes that. */
export const TimestampSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, "Must be RFC 3339 UTC with milliseconds.")
  .openapi({ format: "date-time", example: "2026-11-22T10:04:05.123Z", maxLength: 24 });

// Shared schema instances. Every zod schema a module builds is built when a new isolate starts,
// before its first request, and costs it CPU: the factories below hand out one instance per
// distinct argument rather than a new one per call (zod schemas never change once built, so
// sharing one changes nothing a request or /openapi.json sees). The routes ask for 28 path
// parameter objects naming 35 parameters: 13 distinct objects, 11 distinct parameters.
const memo = <K, T>(cache: Map<K, T>, key: K, build: () => T): T => {
  let value = cache.get(key);
  if (value === undefined) {
    value = build();
    cache.set(key, value);
  }
  return value;
};
const pathParams = new Map<string, typeof IdSchema>();
const paramObjects = new Map<string, z.ZodObject>();

/** A path parameter holding an identifier. */
export function idParams<K extends string>(...names: K[]) {
  return memo(paramObjects, names.join(","), () => {
    const shape = {} as Record<K, typeof IdSchema>;
    for (const name of names) {
      shape[name] = memo(
        pathParams,
        name,
        () => IdSchema.openapi({ param: { name, in: "path" } }) as typeof IdSchema,
      );
    }
    return z.object(shape);
  }) as z.ZodObject<Record<K, typeof IdSchema>>;
}

// Free text in requests (API_CONTRACT §17): a string with an unpaired UTF-16 surrogate is
// `400 bad_input`. The rule is published as the field's `pattern` (the same test as a regular
// expression, in ECMA-262 syntax with or without the `u` flag) and checked with
// `isWellFormed()`, which costs one pass and no backtracking on 64 KiB values.
export const WELL_FORMED_PATTERN = "^(?:[^\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$";
export const WELL_FORMED_MESSAGE = "Must not contain unpaired UTF-16 surrogates.";

/** `schema` (a string schema) that also refuses unpaired surrogates, with the rule in the document. */
export function wellFormed(schema: z.ZodString): z.ZodString {
  return schema
    .refine((value) => (value as string & { isWellFormed(): boolean }).isWellFormed(), WELL_FORMED_MESSAGE)
    .openapi({ pattern: WELL_FORMED_PATTERN });
}

const FREE_STRING = z.string().max(MAX_BODY_BYTES);
/**
 * A string SPEC.md leaves free (a plain `string`): no limit but the body's. A body of at most
 * MAX_BODY_BYTES holds no longer string, so the published `maxLength` is that bound, not a rule of
 * ours (the document gives every request string one).
 */
export const freeString = () => FREE_STRING;

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

const texts = new Map<string, z.ZodString>();
/** Well-formed free text of `min`–`max` characters. */
export const text = (min: number, max: number) =>
  memo(texts, `${min}-${max}`, () => wellFormed(z.string().min(min).max(max)));

const recordNames = new Map<number, z.ZodString>();
/**
 * THE schema of a name given to a record (API_CONTRACT §33): a project's, an environment's, an
 * API key's, a trust's, an audit stream's (integrations have none), on every create and rename, public and
 * internal, each with its record's length (`max`; 1–100 unless the contract says otherwise). A name
 * a person can read (src/lib/readable-name.ts), refused as `400 bad_input` at `name` otherwise.
 * Request bodies only: the records' own schemas take any string, so a name stored before §33
 * reads as it was, and a rename to a readable one is taken.
 */
export const recordName = (max = 100) =>
  memo(recordNames, max, () =>
    z
      .string()
      // An empty name is below the published `minLength`: one cause, not two.
      .min(1, { abort: true })
      .max(max)
      .superRefine((value, ctx) => {
        const problem = nameProblem(value);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .openapi({ pattern: NAME_PATTERN }),
  );
/**
 * The same name, 1–100, described once as `components.schemas.RecordName` and referenced, for the
 * fields that add nothing to it (a description, `null`: those take `recordName()` inline, as
 * InlineIdSchema beside IdSchema).
 */
export const RecordNameSchema = recordName().openapi("RecordName", {
  description: "Readable: not blank; no control or bidirectional control character.",
});

/** Cloudflare refuses a URL longer than 16 KB before any Worker runs (Workers platform limits). */
export const MAX_URL_BYTES = 16 * 1024;

/** Nor does a request header longer than 16 KB reach a Worker (Workers platform limits). */
export const MAX_HEADER_BYTES = 16 * 1024;

/** A request header's value as RFC 9110 §5.5 writes it: visible characters, spaces and tabs. */
export const HEADER_VALUE_PATTERN = "^[\\t\\x20-\\x7E\\x80-\\xFF]*$";

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A repeatable query filter SPEC.md leaves free (`x=a&x=b`, or `x=a,b`): the values of `item`, a
 * value given twice counting once wherever it is used. No limit but the URL's: every value takes
 * at least one byte and a separator, so no URL that reaches the Worker holds more than
 * MAX_URL_BYTES / 2, the published `maxItems` (a bound, not a rule of ours).
 *
 * Published as what a client sends, so that a validator reading the document takes both forms:
 * an exploded array (`x=a&x=b`) whose every occurrence is one value or several joined by commas
 * (`x=a,b`, one occurrence). For an enum, the pattern spells out its values.
 */
export function queryList<T extends z.ZodType>(item: T, description: string) {
  const maxItems = MAX_URL_BYTES / 2;
  const values = item instanceof z.ZodEnum ? (item.options as string[]) : undefined;
  const one = values ? `(?:${values.map(escapeRegExp).join("|")})` : "[^,]+";
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
      // Spelled out: the generator reads the preprocessed (unknown) input.
      .openapi({
        param: { style: "form", explode: true },
        description: values
          ? `${description} Values: ${values.map((v) => `\`${v}\``).join(", ")}.`
          : description,
        type: "array",
        maxItems,
        items: {
          type: "string",
          pattern: `^${one}(?:,${one})*$`,
          maxLength: MAX_URL_BYTES,
          ...(values ? { example: values.slice(0, 2).join(",") } : {}),
        },
      })
  );
}

/**
 * Instants in requests: any RFC 3339 date-time, with `Z` or an offset, with or without a
 * fraction, and with `T` and `Z` in either case (RFC 3339 §5.6 allows `t` and `z`), read as
 * the instant it names and handed on as the stored form (`…T…Z`, UTC, milliseconds).
 *
 * RFC 3339 §5.6 also allows a leap second (`23:59:60` in UTC, e.g. `2016-12-31T23:59:60Z` or
 * `2017-01-01T00:59:60+01:00`), which JavaScript's Date cannot hold: it is read as the last
 * instant before it, `23:59:59` with the same fraction, as POSIX time counts it.
 */
// Built on first use (src/lib/once.ts), as the instant below: most operations take no instant.
const dateTime = once(() => z.iso.datetime({ offset: true }));
/** The seconds field of an RFC 3339 date-time: `…T hh:mm:ss` then a fraction or the zone. */
const LEAP_SECOND = /^(.{10}T\d{2}:\d{2}:)60(?=[.Z+-])/;

/** The instant `value` names (upper-cased), or undefined when it is no RFC 3339 date-time. */
function readInstant(value: string): Date | undefined {
  const leap = LEAP_SECOND.test(value);
  const text = leap ? value.replace(LEAP_SECOND, "$159") : value;
  if (!dateTime().safeParse(text).success) return undefined;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) return undefined;
  // A leap second exists only as the last second of a UTC day.
  if (leap && (date.getUTCHours() !== 23 || date.getUTCMinutes() !== 59)) return undefined;
  return date;
}

export const instant = once(() =>
  z
    .string()
    .max(64)
    // zod's date-time check takes only upper-case `T` and `Z`; no other character of a
    // date-time has a case.
    .refine((value) => readInstant(value.toUpperCase()) !== undefined, "Expected an RFC 3339 date-time.")
    .transform((value) => (readInstant(value.toUpperCase()) as Date).toISOString())
    .openapi({ type: "string", format: "date-time", example: "2026-11-20T00:00:00.000Z", maxLength: 64 }),
);

/**
 * The read-only fields that identify a record (or its place): echoed, they must be identifiers;
 * those the service compares (`assertEchoMatches`: a project's `id` and `org_id`, a member's
 * `project_id` and `account_id`, a variable's `id`, `environment_id` and `component_id`) must
 * also name this very record. A member's `membership_id` is only checked as an identifier.
 */
const IDENTIFYING_FIELDS = new Set([
  "id",
  "org_id",
  "project_id",
  "account_id",
  "membership_id",
  "environment_id",
  "component_id",
]);

// Built on a replace body's first use: only those take it.
const ignoredField = once(() =>
  z.unknown().optional().openapi({ description: "Read-only: may be sent back as read; ignored." }),
);

/**
 * SPEC.md: "A PUT replaces the whole record: its body contains the full representation,
 * including fields that do not change." A replace body therefore also accepts the record's
 * read-only fields, as a client echoes them back from a GET. They change nothing. Those that
 * identify the record are identifiers, and those the service compares must name this record;
 * the rest (times, a resource ID, an account's profile…) are taken in any form, since they are
 * ignored: `2026-11-23T09:02:29Z` for a `created_at` read as `…29.000Z` is no error. Any other
 * field is still unknown and refused.
 */
export function echoedReadOnlyFields<T extends Record<string, z.ZodType>, K extends keyof T & string>(
  record: z.ZodObject<T>,
  writable: readonly K[],
): { [P in Exclude<keyof T, K>]: z.ZodOptional<z.ZodType> } {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, schema] of Object.entries(record.shape)) {
    if ((writable as readonly string[]).includes(key)) continue;
    shape[key] = IDENTIFYING_FIELDS.has(key) ? schema.optional() : ignoredField();
  }
  return shape as { [P in Exclude<keyof T, K>]: z.ZodOptional<z.ZodType> };
}
