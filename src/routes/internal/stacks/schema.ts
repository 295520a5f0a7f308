/** Internal body of stacks (API_CONTRACT §9); the record is src/schemas/topology.ts. */
import { z } from "@hono/zod-openapi";
import { TemplateIdSchema } from "../../../http/openapi";
import { freeString } from "../../../http/text";

export const StackCreateBody = z.strictObject({
  // A plain string (SPEC.md, API_CONTRACT §9): only organization and project names have 1–100.
  name: freeString().min(1),
  // §17: any string of 1–255 characters (null is none, and refused like 42).
  template_id: TemplateIdSchema.optional(),
});
