/**
 * What a tool of the MCP server is (./index.ts): its arguments (a strict zod object: an argument it
 * does not name is refused, as the API refuses an unknown field), what it answers
 * (`structuredContent`, described by the API's own record schemas, so a tool's answer is the API's
 * record as /openapi.json publishes it), and hints for the client: `readOnlyHint` for what changes
 * nothing (the plans and dry runs too), `destructiveHint` for what can replace or undo something (a
 * deployment replaces what runs, an unlock or an approval lets waiting deployments run, a rejection
 * cancels one), `idempotentHint` for what a repeat leaves as it was. And the arguments and answers
 * the tools share.
 */
import * as z from "zod";
import { ID_PATTERN } from "../../lib/ids";
import { DeploymentSchema } from "../../schemas/deployment";
import type { Api } from "../api";

export type ToolAnnotations = {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
};

export type Tool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> = {
  name: string;
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run: (api: Api, args: z.output<I>) => Promise<z.output<O>>;
};

/** A tool, its `run` checked against its own schemas; then one of a list of tools of any schemas. */
export const tool = <I extends z.ZodObject, O extends z.ZodObject>(t: Tool<I, O>) => t as unknown as Tool;

// Hints. Nothing here reaches past this API's own records (`openWorldHint` false).
export const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
export const write = (destructive: boolean, idempotent = false): ToolAnnotations => ({
  readOnlyHint: false,
  destructiveHint: destructive,
  idempotentHint: idempotent,
  openWorldHint: false,
});

// Arguments. An identifier is checked here, before it becomes a path segment of an API call.
export const id = (what: string) =>
  z.string().regex(ID_PATTERN, "Must be an identifier.").describe(`The ${what}'s ID.`);
export const limit = (max: number, fallback: number) =>
  z.number().int().min(1).max(max).default(fallback).describe(`Page size, 1–${max} (default ${fallback}).`);
export const after = z
  .string()
  .max(1024)
  .regex(/^[\w\-+/=]+$/, "Must be a `next_page` from a previous answer.")
  .optional()
  .describe("The `next_page` of the previous page, to read on.");
export const idempotencyKey = z
  .string()
  .regex(/^[\x21-\x7E]{1,255}$/, "1–255 printable ASCII characters, no space.")
  .optional()
  .describe(
    "Sent as the write's Idempotency-Key: calling again with the same key and arguments (within 24 h) " +
      "answers the first call's result instead of acting twice. Default: a new key for every call.",
  );
export const newKey = (given: string | undefined) => given ?? `mcp-${crypto.randomUUID()}`;

// Answers: the API's records.
export const page = <T extends z.ZodType>(item: T) =>
  z.object({
    data: z.array(item),
    has_more: z.boolean(),
    next_page: z.string().optional().describe("Pass as `after` to read the next page."),
  });
export const deploymentAnswer = z.object({ deployment: DeploymentSchema });
