import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getResource } from "../../services/resources";
import { ResourceParams, StackResourceSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/resources/{id}",
    operationId: "getResource",
    tags: ["Stack resources"],
    summary: "Read a stack resource",
    description: "Needs the project role `viewer` or above.",
    request: { params: ResourceParams },
    responses: { 200: jsonContent(StackResourceSchema, "The stack resource.") },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    return c.json(await getResource(callerContext(c), id), 200);
  });
}
