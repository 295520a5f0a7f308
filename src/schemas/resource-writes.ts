/** The engine's bodies that create and update a stack resource (API_CONTRACT §9). */
import * as z from "zod";
import { RESOURCE_STATUSES } from "../db/schema";
import { freeString, nullAsAbsent, TemplateIdSchema } from "../openapi/primitives";

// SPEC.md types these as plain strings: an engine's reason may be a whole error log. No limit but
// the body's (1 MiB, API_CONTRACT §6); a resource row holds one of each, well within D1's row.
const reason = freeString().nullable().optional();

export const ResourceCreateBody = z.strictObject({
  resource_type: freeString(),
  physical_id: freeString(),
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  // Optional (§9), `null` included: the stack's.
  template_id: nullAsAbsent(TemplateIdSchema),
});

export const ResourceUpdateBody = z.strictObject({
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  // Optional: absent or `null` keeps the stored one.
  physical_id: nullAsAbsent(freeString()),
});

export type ResourceCreateInput = z.infer<typeof ResourceCreateBody>;
export type ResourceUpdateInput = z.infer<typeof ResourceUpdateBody>;
