/**
 * Environments, components and stacks (API_CONTRACT §9) and the bodies that create them: the
 * API's schemas and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { freeString, IdSchema, nullAsAbsent, TemplateIdSchema, TimestampSchema } from "../openapi/primitives";

export const EnvironmentSchema = z.object({
  id: IdSchema,
  project_id: IdSchema,
  name: z.string(),
  created_at: TimestampSchema,
});

export const ComponentSchema = z.object({
  id: IdSchema,
  environment_id: IdSchema,
  name: z.string(),
  created_at: TimestampSchema,
});

export const StackSchema = z.object({
  id: IdSchema,
  environment_id: IdSchema,
  name: z.string(),
  template_id: z.string(),
  created_at: TimestampSchema,
});

export type EnvironmentRecord = z.infer<typeof EnvironmentSchema>;
export type ComponentRecord = z.infer<typeof ComponentSchema>;
export type StackRecord = z.infer<typeof StackSchema>;

/** The body of an environment or a component: a name, a plain string (API_CONTRACT §9). */
export const NameBody = z.strictObject({ name: freeString() });

export const StackCreateBody = z.strictObject({
  // A plain string (SPEC.md, API_CONTRACT §9): only organization and project names have 1–100.
  name: freeString(),
  // §17: any string of 1–255 characters; optional (§9), and `null` is "not given" (a new identifier).
  template_id: nullAsAbsent(TemplateIdSchema),
});

export type NameInput = z.infer<typeof NameBody>;
export type StackCreateInput = z.infer<typeof StackCreateBody>;
