/**
 * The project record (API_CONTRACT §3 "Project"): the API's schema and the services' type (its
 * `z.infer`), one source. The bodies that write it are ./project-writes.ts: a read builds none.
 */
import * as z from "zod";
import { CONNECTION_STATUSES } from "../db/schema";
import { freeString, IdSchema, InlineIdSchema, TimestampSchema } from "../openapi/primitives";

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
