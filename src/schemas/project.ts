/**
 * The project record (API_CONTRACT §3 "Project") and the bodies that write it: the API's schemas
 * and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { CONNECTION_STATUSES } from "../db/schema";
import {
  echoedReadOnlyFields,
  freeString,
  IdSchema,
  InlineIdSchema,
  TimestampSchema,
  text,
} from "../openapi/primitives";

// The pattern is the only rule (SPEC.md, API_CONTRACT §3): a `url:` icon may be a long data URL.
export const IconSchema = freeString()
  .regex(/^(icon|emoji|url):(.+)$/, "Must match ^(icon|emoji|url):(.+)$.")
  .openapi({ example: "emoji:🚀" });

export const ProjectSchema = z
  .object({
    id: IdSchema,
    org_id: IdSchema.openapi({ description: "The owning organization." }),
    name: z.string().openapi({ example: "storefront" }),
    description: z.string().nullable(),
    icon: IconSchema.nullable(),
    repo_id: InlineIdSchema.nullable(),
    default_environment_id: IdSchema,
    connection_status: z.enum(CONNECTION_STATUSES),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("Project");

export type ProjectRecord = z.infer<typeof ProjectSchema>;

const name = text(1, 100).openapi({
  description: "1–100 characters, unique within the organization regardless of case.",
});
const description = text(0, 1000).nullable().optional();

export const ProjectCreateSchema = z
  .strictObject({
    name,
    description,
    icon: IconSchema.nullable().optional(),
    repo_id: InlineIdSchema.nullable().optional(),
  })
  .openapi("ProjectCreate");

export const ProjectReplaceSchema = z
  .strictObject({
    ...echoedReadOnlyFields(ProjectSchema, [
      "name",
      "default_environment_id",
      "description",
      "icon",
      "repo_id",
    ]),
    name,
    default_environment_id: IdSchema.openapi({ description: "Must name an environment of this project." }),
    description,
    icon: IconSchema.nullable().optional(),
    repo_id: InlineIdSchema.nullable().optional(),
  })
  .openapi("ProjectReplace", {
    description:
      "The full record: `description`, `icon` or `repo_id` left out becomes null. The read-only fields of " +
      "the record may be sent back as read; they change nothing, and `id` and `org_id` must match.",
  });

export type ProjectCreateInput = z.infer<typeof ProjectCreateSchema>;
export type ProjectReplaceInput = z.infer<typeof ProjectReplaceSchema>;
