import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listEnvironmentStacks } from "../../services/topology";
import { EnvironmentParams, stackListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/stacks",
    operationId: "listEnvironmentStacks",
    tags: ["Environments"],
    summary: "List an environment's stacks",
    description: "Keyset-paginated. Project role `viewer` or above.",
    request: { params: EnvironmentParams, query: listQuery() },
    responses: { 200: jsonContent(stackListSchema(), "A page of stacks.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listEnvironmentStacks(callerContext(c), environment_id, page), 200);
  });
}
