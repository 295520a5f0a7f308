/** Internal body and record of stacks (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { IdSchema, TimestampSchema } from "../../../http/openapi";

export const StackCreateBody = z.strictObject({
  name: z.string().min(1).max(100),
  template_id: IdSchema.optional(),
});

export const StackSchema = z.object({
  id: IdSchema,
  environment_id: IdSchema,
  name: z.string(),
  template_id: z.string(),
  created_at: TimestampSchema,
});
