import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { VariableReplaceSchema } from "../../schemas/variable-writes";
import { replaceVariable } from "../../services/variables/variables";
import { VariableParams, VariableSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "put",
    path: "/v1/variables/{variable_id}",
    operationId: "replaceVariable",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Variables"],
    summary: "Replace a variable",
    description:
      "A full replace: `name`, `type` and `value` are all required. The variable keeps its scope. A name " +
      "used by another variable of the same scope is `409 conflict`. Needs the project role `contributor` or above.",
    request: { params: VariableParams, body: jsonBody(VariableReplaceSchema) },
    responses: { 200: jsonContent(VariableSchema, "The replaced variable (without its value).") },
  });
  app.openapi(route, async (c) => {
    const { variable_id } = c.req.valid("param");
    const variable = await replaceVariable(callerContext(c), variable_id, c.req.valid("json"));
    return c.json(variable, 200);
  });
}
