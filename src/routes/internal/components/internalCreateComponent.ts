import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { ComponentSchema } from "../../../schemas/topology";
import { NameBody } from "../../../schemas/topology-writes";
import { createComponent } from "../../../services/topology";
import { EnvironmentIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/environments/{environment_id}/components",
    operationId: "internalCreateComponent",
    request: { params: EnvironmentIdParams, body: jsonBody(NameBody) },
    responses: { 201: jsonContent(ComponentSchema, "The new component.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await createComponent(c.get("ctx"), environment_id, c.req.valid("json")), 201);
  });
}
