/** The bodies that create and replace a project (API_CONTRACT §3, SPEC.md "Project"). */
import * as z from "zod";
import {
  echoedReadOnlyFields,
  IdSchema,
  InlineIdSchema,
  RecordNameSchema,
  text,
} from "../openapi/primitives";
import { IconSchema, ProjectSchema } from "./project";

// A reference to the one name (API_CONTRACT §33); its rule of uniqueness is the body's description.
const name = RecordNameSchema;
const UNIQUE_NAME = "`name`: unique within the organization regardless of case.";
const description = text(0, 1000).nullable().optional();

export const ProjectCreateSchema = z
  .strictObject({
    name,
    description,
    icon: IconSchema.nullable().optional(),
    repo_id: InlineIdSchema.nullable().optional(),
  })
  .openapi("ProjectCreate", { description: UNIQUE_NAME });

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
      `${UNIQUE_NAME} The full record: \`description\`, \`icon\` or \`repo_id\` left out becomes null. The read-only fields of ` +
      "the record may be sent back as read; they change nothing, and `id` and `org_id` must match.",
  });

export type ProjectCreateInput = z.infer<typeof ProjectCreateSchema>;
export type ProjectReplaceInput = z.infer<typeof ProjectReplaceSchema>;
