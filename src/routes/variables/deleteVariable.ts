import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { deleteVariable } from "../../services/variables/variables";
import { VariableParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/variables/{variable_id}",
    operationId: "deleteVariable",
    lostAnswer: { rebuild: "status" },
    tags: ["Variables"],
    summary: "Delete a variable",
    description: "Needs the project role `contributor` or above. The name is free again at once.",
    request: { params: VariableParams },
    responses: { 204: { description: "Deleted." } },
  });
  app.openapi(route, async (c) => {
    await deleteVariable(callerContext(c), c.req.valid("param").variable_id);
    return c.body(null, 204);
  });
}
