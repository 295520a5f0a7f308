import * as z from "zod";
import { once } from "../../lib/once";
import { envelope, listQuery, sequencePosition } from "../../openapi/lists";
import { InlineIdSchema, idParams, queryList } from "../../openapi/primitives";
import { AuditEntrySchema } from "../../schemas/audit";

/** Built by the list operations only: a read of one record builds no envelope. */
export const auditEntryListSchema = once(() => envelope(AuditEntrySchema, "AuditEntryList"));

/** Any name (an action that was never recorded matches nothing); empty is a mistake, not a filter. */
const ActionSchema = z.string().min(1, "Must name an action (an operationId).");

// The service binds the set of actions as one JSON parameter, whatever its size.
const ActionFilterSchema = queryList(
  ActionSchema,
  "Only entries of these actions (operationIds): repeat the parameter or separate values with commas. " +
    "A cursor is bound to the set of actions.",
);

const ProjectListQuery = listQuery().extend({
  after_sequence: sequencePosition().openapi({
    param: { name: "after_sequence", in: "query" },
    description:
      "Only entries whose `sequence` is greater, by `sequence` ascending (`sort_by` plays no part).",
    example: 0,
  }),
  action: ActionFilterSchema,
  actor_account_id: InlineIdSchema.optional().openapi({
    description: "Only entries of requests made as this account.",
  }),
});

export const ProjectAuditLogQuerySchema = ProjectListQuery;
export const OrgAuditLogQuerySchema = ProjectListQuery.extend({
  project_id: InlineIdSchema.optional().openapi({ description: "Only entries about this project." }),
});

export const OrgParams = idParams("org_id");
export const ProjectParams = idParams("project_id");
