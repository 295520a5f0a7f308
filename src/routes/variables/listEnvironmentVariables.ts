import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listEnvironmentVariables } from "../../services/variables/variables";
import { EnvironmentParams, variableListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/environments/{environment_id}/variables",
    operationId: "listEnvironmentVariables",
    tags: ["Variables"],
    summary: "List the variables of an environment",
    description:
      "The environment's own variables (`component_id` null), without their values; component variables " +
      "are listed under their component. Needs the project role `viewer` or above.",
    request: { params: EnvironmentParams, query: listQuery() },
    responses: { 200: jsonContent(variableListSchema(), "A page of variables.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(
      await listEnvironmentVariables(callerContext(c), c.req.valid("param").environment_id, page),
      200,
    );
  });
}
