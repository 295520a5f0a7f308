/** Internal body of stacks (API_CONTRACT §9); the record is src/schemas/topology.ts. */
import { z } from "@hono/zod-openapi";
import { TemplateIdSchema } from "../../../http/openapi";

export const StackCreateBody = z.strictObject({
  name: z.string().min(1).max(100),
  template_id: TemplateIdSchema.optional(),
});
