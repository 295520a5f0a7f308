import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listEnvironmentResources } from "../../services/resources";
import { EnvironmentParams, stackResourceListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/resources",
    operationId: "listEnvironmentResources",
    tags: ["Stack resources"],
    summary: "List the resources of every stack of an environment",
    description: "Needs the project role `viewer` or above.",
    request: { params: EnvironmentParams, query: listQuery() },
    responses: { 200: jsonContent(stackResourceListSchema(), "A page of stack resources.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listEnvironmentResources(callerContext(c), environment_id, page), 200);
  });
}
