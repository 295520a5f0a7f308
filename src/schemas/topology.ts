/**
 * Environments, components and stacks (API_CONTRACT §9, §23) and the bodies that create and
 * change them: the API's schemas and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import {
  freeString,
  IdSchema,
  InlineIdSchema,
  nullAsAbsent,
  TemplateIdSchema,
  TimestampSchema,
  text,
} from "../openapi/primitives";

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

/** The body of a component: a name, a plain string (API_CONTRACT §9). */
export const NameBody = z.strictObject({ name: freeString() });

const environmentName = text(1, 100).openapi({
  description: "1–100 characters, unique within the project regardless of case.",
  example: "staging",
});

/** The engine's environment create (§9): a name, held to §23's rule like every create. */
export const EnvironmentNameBody = z.strictObject({ name: environmentName });

export const EnvironmentCreateSchema = z
  .strictObject({
    name: environmentName,
    copy_variables_from: nullAsAbsent(
      InlineIdSchema.openapi({
        description:
          "Another environment of the project whose own variables (names, types and values; not its components') " +
          "the new environment starts with, as its version 1.",
      }),
    ),
  })
  .openapi("EnvironmentCreate");

export const EnvironmentUpdateSchema = z.strictObject({ name: environmentName }).openapi("EnvironmentUpdate");

export const StackCreateBody = z.strictObject({
  // A plain string (SPEC.md, API_CONTRACT §9): only organization and project names have 1–100.
  name: freeString(),
  // §17: any string of 1–255 characters; optional (§9), and `null` is "not given" (a new identifier).
  template_id: nullAsAbsent(TemplateIdSchema),
});

export type NameInput = z.infer<typeof NameBody>;
export type EnvironmentCreateInput = z.infer<typeof EnvironmentCreateSchema>;
export type EnvironmentUpdateInput = z.infer<typeof EnvironmentUpdateSchema>;
export type StackCreateInput = z.infer<typeof StackCreateBody>;
