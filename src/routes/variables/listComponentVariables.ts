import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listComponentVariables } from "../../services/variables/variables";
import { ComponentParams, variableListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/components/{component_id}/variables",
    operationId: "listComponentVariables",
    tags: ["Variables"],
    summary: "List the variables of a component",
    description:
      "The component's own variables, without their values. Needs the project role `viewer` or above.",
    request: { params: ComponentParams, query: listQuery() },
    responses: { 200: jsonContent(variableListSchema(), "A page of variables.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(
      await listComponentVariables(callerContext(c), c.req.valid("param").component_id, page),
      200,
    );
  });
}
