import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getComponent } from "../../services/topology";
import { ComponentParams, ComponentSchema } from "../environments/schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/components/{component_id}",
    operationId: "getComponent",
    tags: ["Environments"],
    summary: "Read a component",
    description: "Project role `viewer` or above.",
    request: { params: ComponentParams },
    responses: { 200: jsonContent(ComponentSchema, "The component.") },
  });
  app.openapi(route, async (c) => {
    const { component_id } = c.req.valid("param");
    return c.json(await getComponent(callerContext(c), component_id), 200);
  });
}
