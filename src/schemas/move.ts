/**
 * Moving an organization between databases (API_CONTRACT §32): the move record, the operator's
 * body that starts one, and the organization as the internal API shows it (with its database).
 */
import * as z from "zod";
import { MOVE_STATES } from "../db/schema";
import { IdSchema, TimestampSchema } from "../openapi/primitives";
import { OrganizationSchema } from "./organization";

export const MoveSchema = z
  .object({
    id: IdSchema,
    org_id: IdSchema,
    from: z.string().openapi({ description: "The database it leaves (a name out of `ORG_DATABASES`)." }),
    to: z.string().openapi({ description: "The database it goes to." }),
    state: z.enum(MOVE_STATES),
    rows_copied: z.number().int().min(0),
    error: z.string().nullable(),
    created_at: TimestampSchema,
    finished_at: TimestampSchema.nullable(),
  })
  .openapi("Move");
export type MoveRecord = z.infer<typeof MoveSchema>;

export const MoveCreateBody = z
  .strictObject({
    to: z
      .string()
      .openapi({ description: "A database out of `ORG_DATABASES` other than the organization's." }),
  })
  .openapi("MoveCreate");

export const InternalOrganizationSchema = OrganizationSchema.extend({
  database: z.string().openapi({ description: "The database out of `ORG_DATABASES` that holds it." }),
}).openapi("InternalOrganization");
export type InternalOrganizationRecord = z.infer<typeof InternalOrganizationSchema>;
