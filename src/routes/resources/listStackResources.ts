import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listStackResources } from "../../services/resources";
import { StackParams, stackResourceListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/stacks/{stack_id}/resources",
    operationId: "listStackResources",
    tags: ["Stack resources"],
    summary: "List the resources of a stack",
    description: "Needs the project role `viewer` or above.",
    request: { params: StackParams, query: listQuery() },
    responses: { 200: jsonContent(stackResourceListSchema(), "A page of stack resources.") },
  });
  app.openapi(route, async (c) => {
    const { stack_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listStackResources(callerContext(c), stack_id, page), 200);
  });
}
