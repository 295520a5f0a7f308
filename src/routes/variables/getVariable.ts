import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getVariable } from "../../services/variables/variables";
import { VariableParams, VariableSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/variables/{variable_id}",
    operationId: "getVariable",
    tags: ["Variables"],
    summary: "Read a variable (without its value)",
    description:
      "Needs the project role `viewer` or above. The value is read from `/v1/variables/{variable_id}/value`.",
    request: { params: VariableParams },
    responses: { 200: jsonContent(VariableSchema, "The variable.") },
  });
  app.openapi(route, async (c) => {
    const { variable_id } = c.req.valid("param");
    return c.json(await getVariable(callerContext(c), variable_id), 200);
  });
}
