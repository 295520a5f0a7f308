/** The list query every list operation shares (`after`, `limit`, `sort_by`) and the page envelope (API_CONTRACT §4). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import { DEFAULT_LIMIT, MAX_LIMIT, SORT_VALUES } from "../db/pagination";
import { once } from "../lib/once";

/**
 * The query parameters every list shares, published once under `components.parameters` (each
 * carries its component name; `registerListQueryParameters` registers them) and referenced by
 * every list operation, which keeps /openapi.json small.
 */
const LIST_QUERY_PARAMETERS = { after: "ListAfter", limit: "ListLimit", sort_by: "ListSortBy" } as const;

/** Decimal digits only: `Number()` alone would also take " 5", "0x10" and "1e1". */
const digitsOnly = (value: unknown) =>
  typeof value === "string" && !/^[0-9]+$/.test(value) ? Number.NaN : value;

// Spelled out for the document: the generator reads the preprocessed (unknown) input and drops
// the bounds.
const published = (min: number, max: number) => ({
  type: "integer" as const,
  format: "int64",
  minimum: min,
  maximum: max,
});

/** What a value that is not decimal digits (`-1`, `1.5`, `abc`, empty) is told, rather than zod's "received NaN". */
const DIGITS = {
  error: (issue: { code?: string }) =>
    issue.code === "invalid_type" ? "Expected a whole number written in decimal digits." : undefined,
};

/**
 * An optional position in a numbered sequence (`after_seq` §19, `after_sequence` §30: "an integer
 * ≥ 0"), in decimal digits of any length. No sequence passes 2^53 − 1, so a larger position is read
 * as that one: past every entry (an empty page), as any position past the last is, not `400`.
 */
export const sequencePosition = () =>
  z
    .preprocess((value) => {
      const digits = digitsOnly(value);
      return typeof digits === "string" && Number(digits) > Number.MAX_SAFE_INTEGER
        ? Number.MAX_SAFE_INTEGER
        : digits;
    }, z.coerce.number(DIGITS).int().min(0).optional())
    // Published with that bound (every integer a request takes has one: scripts/lint-openapi.mjs).
    .openapi(published(0, Number.MAX_SAFE_INTEGER));

/** A page size from 1 to `max`, in decimal digits; `fallback` when absent. */
export const pageLimit = (max: number, fallback: number) =>
  z
    .preprocess(digitsOnly, z.coerce.number(DIGITS).int().min(1).max(max).default(fallback))
    .openapi({ ...published(1, max), default: fallback });

/**
 * The shared list query, built on first use: only list operations take it (a read of one record
 * builds none of its preprocessing, coercion and defaults).
 */
export const listQuery = once(() =>
  z.object({
    after: z
      .string()
      .max(1024)
      .regex(/^[\w\-+/= ]+$/, "Must be a cursor from a previous `next_page`.")
      .optional()
      .openapi(LIST_QUERY_PARAMETERS.after, {
        param: { name: "after", in: "query" },
        description: "Cursor from a previous `next_page` (standard or URL-safe base64).",
      }),
    limit: pageLimit(MAX_LIMIT, DEFAULT_LIMIT).openapi(LIST_QUERY_PARAMETERS.limit, {
      param: { name: "limit", in: "query" },
      description: `Page size, 1–${MAX_LIMIT}.`,
      example: DEFAULT_LIMIT,
    }),
    // A raw `+` in a query string arrives as a space (as for `after`): ` created_at` is `+created_at`.
    sort_by: z
      .preprocess(
        (value) => (value === " created_at" ? "+created_at" : value),
        z.enum(SORT_VALUES).default("-created_at"),
      )
      .openapi(LIST_QUERY_PARAMETERS.sort_by, {
        param: { name: "sort_by", in: "query" },
        description:
          "`created_at` and `+created_at` ascending, `-created_at` descending (default). Ties by `id`.",
      }),
  }),
);

/** Registers the shared list query parameters under `components.parameters` (./document.ts). */
export function registerListQueryParameters(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const [field, name] of Object.entries(LIST_QUERY_PARAMETERS)) {
    registry.registerParameter(name, listQuery().shape[field as keyof typeof LIST_QUERY_PARAMETERS]);
  }
}

// One instance of each field every envelope shares, rather than one per list (./primitives.ts),
// made with the first envelope: a module that imports this one to declare its list builds nothing
// until a list operation asks for the envelope (routes/*/schema.ts: `once(() => envelope(…))`).
const pageFields = once(() => ({
  has_more: z.boolean(),
  next_page: z
    .string()
    .regex(/^[a-zA-Z0-9+/=]+$/)
    .optional()
    .openapi({ description: "Cursor for the next page; present only when `has_more` is true." }),
}));

/** The paginated list envelope. */
export function envelope<T extends z.ZodType>(item: T, name: string) {
  return z.object({ data: z.array(item), ...pageFields() }).openapi(name);
}
