/** The requests of variable sets (API_CONTRACT §18): a change of a whole scope and a restore. */
import * as z from "zod";
import type { VariableType } from "../db/schema";
import { MAX_CAUSES } from "../errors";
import { MAX_NAME_LENGTH, parseDotenv, VARIABLE_NAME } from "../lib/dotenv";
import { freeString, nullAsAbsent, wellFormed } from "../openapi/primitives";
import { VariableTypeSchema } from "./variable";
import { MAX_CHANGE_NAMES, MAX_VERSION } from "./variable-set";
import { MAX_VALUE_BYTES, VariableWriteSchema } from "./variable-writes";

const utf8 = new TextEncoder();

export const VariableSetEntrySchema = z
  .strictObject({ type: VariableTypeSchema, value: VariableWriteSchema.shape.value })
  .nullable()
  .openapi("VariableSetEntry", {
    description: "The variable's `type` and `value` (the rules of a single create), or `null` to delete it.",
    example: { type: "secret", value: "postgres://app:hunter2@db.internal:5432/app" },
  });

const NAME_MESSAGE = `Not a variable name: it must match ^[A-Za-z_][\\w]*$ and have at most ${MAX_NAME_LENGTH} characters.`;

/** A change the services apply: each name once, its new type and value or null (delete). */
export type NamedChange = { name: string; entry: { type: VariableType; value: string } | null };
export type ChangeSet = {
  changes: NamedChange[];
  mode: "merge" | "replace";
  /** Where a name's issue is reported: `variables.NAME`, or `dotenv.line.N`. */
  pathOf: Map<string, string>;
  baseVersion: number | undefined;
  dryRun: boolean;
};

const issue = (path: (string | number)[], message: string) => ({ code: "custom" as const, path, message });

export const VariableChangesSchema = z
  .strictObject({
    // Validated name by name in the transform below: a record schema drops a `__proto__` key,
    // which is a well-formed variable name (§3), so the object is read as it was sent.
    variables: z
      .unknown()
      .optional()
      .openapi({
        type: ["object", "null"],
        description:
          "Name → `{type, value}`, or `null` to delete the name (merge mode only). 1–500 names. Exactly one " +
          "of `variables` and `dotenv` (`null` is not given).",
        minProperties: 1,
        maxProperties: MAX_CHANGE_NAMES,
        additionalProperties: { $ref: "#/components/schemas/VariableSetEntry" },
        // OpenAPI 3.1 (JSON Schema) keyword the metadata type does not list.
        ...({ propertyNames: { pattern: VARIABLE_NAME.source, maxLength: MAX_NAME_LENGTH } } as object),
      }),
    dotenv: nullAsAbsent(wellFormed(freeString())).openapi({
      description:
        "A dotenv file (API_CONTRACT §18): lines `NAME=value` (optionally `export NAME=value`), blank lines and " +
        '`#` comments; `"…"` takes the escapes `\\\\`, `\\"`, `\\n`, `\\r`, `\'…\'` is literal, an unquoted value ' +
        "is trimmed and ends at ` #`. Each entry takes `type`. 1–500 names, each once. Exactly one of " +
        "`variables` and `dotenv`.",
      example: 'DATABASE_URL="postgres://app@db:5432/app"\nLOG_LEVEL=debug # verbose for now\n',
    }),
    type: nullAsAbsent(VariableTypeSchema).openapi({
      default: "secret",
      description: "The type of every `dotenv` entry (default `secret`). Not with `variables`.",
    }),
    mode: nullAsAbsent(z.enum(["merge", "replace"])).openapi({
      default: "merge",
      description:
        "`merge` (default): names not given stay as they are. `replace`: the scope ends holding exactly the " +
        "given names (no `null` then).",
    }),
    base_version: nullAsAbsent(z.number().int().min(0).max(MAX_VERSION)).openapi({
      description:
        "The version the change was planned against: if the scope is at another version, `409 conflict` " +
        "(`cause` path `base_version`) and nothing changes.",
      format: "int64",
    }),
    dry_run: nullAsAbsent(z.boolean()).openapi({
      default: false,
      description: "Answer what the change would do and change nothing (no version, no audit entry).",
    }),
  })
  .transform((body, ctx): ChangeSet => {
    // An array, never spread: a body of a million bad names must not become a million arguments.
    const fail = (issues: readonly ReturnType<typeof issue>[]) => {
      for (const i of issues) ctx.addIssue(i);
      return z.NEVER;
    };
    const tooMany = (field: "variables" | "dotenv", count: number) =>
      fail([issue([field], `Between 1 and ${MAX_CHANGE_NAMES} names; got ${count}.`)]);
    // `null` is a field not given, as everywhere in this API.
    const variables = body.variables ?? undefined;
    const { dotenv } = body;
    if ((variables === undefined) === (dotenv === undefined)) {
      const message = "Give exactly one of `variables` and `dotenv`.";
      return fail([issue(["variables"], message), issue(["dotenv"], message)]);
    }
    const mode = body.mode ?? "merge";
    const pathOf = new Map<string, string>();
    let changes: NamedChange[];
    if (variables !== undefined) {
      if (body.type !== undefined) return fail([issue(["type"], "`type` goes with `dotenv` only.")]);
      if (typeof variables !== "object" || variables === null || Array.isArray(variables)) {
        return fail([issue(["variables"], "Expected an object: name → `{type, value}` or `null`.")]);
      }
      // Counted before any name is read: too many is refused at the cost of counting them.
      const count = Object.keys(variables).length;
      if (count > MAX_CHANGE_NAMES) return tooMany("variables", count);
      changes = [];
      const issues: Array<{ path: PropertyKey[] }> = [];
      for (const [name, value] of Object.entries(variables)) {
        if (!VARIABLE_NAME.test(name) || name.length > MAX_NAME_LENGTH)
          issues.push(issue(["variables", name], NAME_MESSAGE));
        const entry = VariableSetEntrySchema.safeParse(value);
        if (entry.success) changes.push({ name, entry: entry.data });
        else issues.push(...entry.error.issues.map((i) => ({ ...i, path: ["variables", name, ...i.path] })));
        pathOf.set(name, `variables.${name}`);
      }
      if (issues.length > 0) return fail(issues as ReturnType<typeof issue>[]);
      const deletes = changes.filter((c) => c.entry === null);
      if (mode === "replace" && deletes.length > 0) {
        return fail(deletes.map((c) => issue(["variables", c.name], "`null` deletes only in merge mode.")));
      }
    } else {
      const parsed = parseDotenv(dotenv as string, MAX_CAUSES);
      if ("issues" in parsed)
        return fail(parsed.issues.map((i) => issue(["dotenv", "line", i.line], i.message)));
      const type = body.type ?? "secret";
      const tooLong = parsed.entries.filter((e) => utf8.encode(e.value).length > MAX_VALUE_BYTES);
      if (tooLong.length > 0) {
        return fail(
          tooLong.map((e) =>
            issue(["dotenv", "line", e.line], `The value is over ${MAX_VALUE_BYTES} bytes (UTF-8).`),
          ),
        );
      }
      changes = parsed.entries.map(({ name, value }) => ({ name, entry: { type, value } }));
      for (const e of parsed.entries) pathOf.set(e.name, `dotenv.line.${e.line}`);
    }
    if (changes.length < 1 || changes.length > MAX_CHANGE_NAMES) {
      return tooMany(variables !== undefined ? "variables" : "dotenv", changes.length);
    }
    return { changes, mode, pathOf, baseVersion: body.base_version, dryRun: body.dry_run ?? false };
  })
  .openapi("VariableChanges", {
    description:
      "One change to a scope's variables, applied all or nothing: exactly one of `variables` and `dotenv`.",
  });

export const VariableRestoreSchema = z
  .strictObject({
    dry_run: nullAsAbsent(z.boolean()).openapi({
      description: "Answer what the restore would do and change nothing.",
    }),
  })
  .openapi("VariableRestore", { description: "Optional: `{}` or no body restores at once." });

export type VariableRestoreInput = z.infer<typeof VariableRestoreSchema>;
