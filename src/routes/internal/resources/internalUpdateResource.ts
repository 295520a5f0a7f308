import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { StackResourceSchema } from "../../../schemas/resource";
import { ResourceUpdateBody } from "../../../schemas/resource-writes";
import { updateResource } from "../../../services/resources";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "patch",
    path: "/internal/v1/resources/{id}",
    operationId: "internalUpdateResource",
    description:
      "`timestamp` moves only when `status` changes. A `status_reason` left out is kept while the status " +
      "stays and cleared when it changes; `null` clears it.",
    request: { params: IdParams, body: jsonBody(ResourceUpdateBody) },
    responses: { 200: jsonContent(StackResourceSchema, "The updated stack resource.") },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await updateResource(c.get("ctx"), id, c.req.valid("json")), 200);
  });
}
