/**
 * The stack resource record (API_CONTRACT §3): the API's schema and the services' type (its
 * `z.infer`), one source. The engine's reports that create and update it (§9) are
 * ./resource-writes.ts.
 */
import * as z from "zod";
import { RESOURCE_STATUSES } from "../db/schema";
import { IdSchema, TemplateIdSchema, TimestampSchema } from "../openapi/primitives";

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
