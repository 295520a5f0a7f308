/** Internal body of stacks (API_CONTRACT §9); the record is src/schemas/topology.ts. */
import { z } from "@hono/zod-openapi";
import { freeString, nullAsAbsent, TemplateIdSchema } from "../../../openapi/primitives";

export const StackCreateBody = z.strictObject({
  // A plain string (SPEC.md, API_CONTRACT §9): only organization and project names have 1–100.
  name: freeString(),
  // §17: any string of 1–255 characters; optional (§9), and `null` is "not given" (a new identifier).
  template_id: nullAsAbsent(TemplateIdSchema),
});
