/** Internal API: the engine reports stack resources (API_CONTRACT §9). */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { RESOURCE_STATUSES } from "../../db/schema";
import type { AppEnv } from "../../env";
import { idParams, jsonBody, jsonContent, TemplateIdSchema } from "../../http/openapi";
import { createResource, updateResource } from "../../services/resources";
import { StackResourceSchema } from "../resources/schema";
import { defineInternalRoute } from "./schema";

const reason = z.string().max(4096).nullable().optional();

const ResourceCreateBody = z.strictObject({
  resource_type: z.string().min(1).max(256),
  physical_id: z.string().min(1).max(2048),
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  template_id: TemplateIdSchema.optional(),
});

const ResourceUpdateBody = z.strictObject({
  status: z.enum(RESOURCE_STATUSES),
  status_reason: reason,
  physical_id: z.string().min(1).max(2048).optional(),
});

export function registerInternalResourcesRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/stacks/{stack_id}/resources",
      request: { params: idParams("stack_id"), body: jsonBody(ResourceCreateBody) },
      responses: { 201: jsonContent(StackResourceSchema, "The new stack resource.") },
    }),
    async (c) => {
      const { stack_id } = c.req.valid("param");
      return c.json(await createResource(c.get("ctx"), stack_id, c.req.valid("json")), 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "patch",
      path: "/internal/v1/resources/{id}",
      description:
        "`timestamp` moves only when `status` changes. A `status_reason` left out is kept while the status " +
        "stays and cleared when it changes; `null` clears it.",
      request: { params: idParams("id"), body: jsonBody(ResourceUpdateBody) },
      responses: { 200: jsonContent(StackResourceSchema, "The updated stack resource.") },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      return c.json(await updateResource(c.get("ctx"), id, c.req.valid("json")), 200);
    },
  );
}
