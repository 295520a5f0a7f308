/** Internal record of components (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { IdSchema, TimestampSchema } from "../../../http/openapi";

export const ComponentSchema = z.object({
  id: IdSchema,
  environment_id: IdSchema,
  name: z.string(),
  created_at: TimestampSchema,
});
