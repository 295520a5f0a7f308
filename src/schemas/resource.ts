/**
 * The stack resource record (API_CONTRACT §3) and the engine's reports that create and update it
 * (§9): the API's schemas and the services' types (their `z.infer`), one source.
 */
import { z } from "@hono/zod-openapi";
import { RESOURCE_STATUSES } from "../db/schema";
import { freeString, IdSchema, nullAsAbsent, TemplateIdSchema, TimestampSchema } from "../openapi/primitives";

export const ResourceStatusSchema = z
  .enum(RESOURCE_STATUSES)
  .openapi("StackResourceStatus", { description: "The provisioning status of the resource." });

export const StackResourceSchema = z
  .object({
    id: IdSchema,
    stack_id: IdSchema,
    environment_id: IdSchema,
    template_id: TemplateIdSchema,
    resource_type: z.string().openapi({ example: "AWS::Lambda::Function" }),
    physical_id: z.string().openapi({ example: "storefront-api-handler" }),
    status: ResourceStatusSchema,
    status_reason: z
      .string()
      .nullable()
      .openapi({ description: "Why the resource has its status, or null." }),
    timestamp: TimestampSchema.openapi({ description: "Time of the last status change." }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi("StackResource");

export type StackResourceRecord = z.infer<typeof StackResourceSchema>;

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
