import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listEnvironmentComponents } from "../../services/topology";
import { componentListSchema, EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/components",
    operationId: "listEnvironmentComponents",
    tags: ["Environments"],
    summary: "List an environment's components",
    description: "Keyset-paginated. Project role `viewer` or above.",
    request: { params: EnvironmentParams, query: listQuery() },
    responses: { 200: jsonContent(componentListSchema(), "A page of components.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listEnvironmentComponents(callerContext(c), environment_id, page), 200);
  });
}
