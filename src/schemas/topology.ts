/**
 * Environments, components and stacks (API_CONTRACT §9, §23): the API's schemas and the services'
 * types (their `z.infer`), one source. The bodies that create and change them are
 * ./topology-writes.ts: a read builds none.
 */
import * as z from "zod";
import { IdSchema, InlineIdSchema, TimestampSchema } from "../openapi/primitives";

export const EnvironmentSchema = z
  .object({
    id: IdSchema,
    project_id: IdSchema,
    name: z.string(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    current_deployment_id: InlineIdSchema.nullable().openapi({
      description:
        "The environment's most recently finished deployment that `succeeded` (by `finished_at`), or null.",
    }),
    config_pending: z.boolean().openapi({
      description:
        "True when a variable of the environment or of one of its components changed (or a component was added) " +
        "since the configuration `current_deployment_id` runs with: a deployment would bring a change.",
    }),
  })
  .openapi("Environment");

/** What the internal create answers (API_CONTRACT §9): the environment as it was made. */
export const CreatedEnvironmentSchema = EnvironmentSchema.pick({
  id: true,
  project_id: true,
  name: true,
  created_at: true,
});

export const ComponentSchema = z
  .object({
    id: IdSchema,
    environment_id: IdSchema,
    name: z.string(),
    created_at: TimestampSchema,
  })
  .openapi("Component");

export const StackSchema = z
  .object({
    id: IdSchema,
    environment_id: IdSchema,
    name: z.string(),
    template_id: z.string(),
    created_at: TimestampSchema,
  })
  .openapi("Stack");

export type EnvironmentRecord = z.infer<typeof EnvironmentSchema>;
export type CreatedEnvironmentRecord = z.infer<typeof CreatedEnvironmentSchema>;
export type ComponentRecord = z.infer<typeof ComponentSchema>;
export type StackRecord = z.infer<typeof StackSchema>;
