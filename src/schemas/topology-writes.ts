/** The bodies that create and change environments, components and stacks (API_CONTRACT §9, §23). */
import * as z from "zod";
import {
  freeString,
  InlineIdSchema,
  nullAsAbsent,
  RecordNameSchema,
  TemplateIdSchema,
} from "../openapi/primitives";

/** The body of a component: a name, a plain string (API_CONTRACT §9). */
export const NameBody = z.strictObject({ name: freeString() });

// A reference to the one name (API_CONTRACT §33); its rule of uniqueness is the body's description.
const environmentName = RecordNameSchema;
const UNIQUE_NAME = "`name`: unique within the project regardless of case.";

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
  .openapi("EnvironmentCreate", { description: UNIQUE_NAME });

export const EnvironmentUpdateSchema = z
  .strictObject({ name: environmentName })
  .openapi("EnvironmentUpdate", { description: UNIQUE_NAME });

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
