/** Internal record of environments (API_CONTRACT §9). */
import { z } from "@hono/zod-openapi";
import { IdSchema, TimestampSchema } from "../../../http/openapi";

export const EnvironmentSchema = z.object({
  id: IdSchema,
  project_id: IdSchema,
  name: z.string(),
  created_at: TimestampSchema,
});
