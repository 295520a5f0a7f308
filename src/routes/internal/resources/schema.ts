/** Internal bodies of stack resources: the engine reports them (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { RESOURCE_STATUSES } from "../../../db/schema";
import { TemplateIdSchema } from "../../../http/openapi";

const reason = z.string().max(4096).nullable().optional();

export const ResourceCreateBody = z.strictObject({
  resource_type: z.string().min(1).max(256),
  physical_id: z.string().min(1).max(2048),
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  template_id: TemplateIdSchema.optional(),
});

export const ResourceUpdateBody = z.strictObject({
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  physical_id: z.string().min(1).max(2048).optional(),
});
