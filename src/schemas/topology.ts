/** Environments, components and stacks (API_CONTRACT §9): the API's schemas and the services' types, one source. */
import { z } from "@hono/zod-openapi";
import { IdSchema, TimestampSchema } from "../openapi/primitives";

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
