import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { VariableWriteSchema } from "../../schemas/variable-writes";
import { createEnvironmentVariable } from "../../services/variables/variables";
import { EnvironmentParams, VariableSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/environments/{environment_id}/variables",
    operationId: "createEnvironmentVariable",
    lostAnswer: { rebuild: "record", from: "/v1/variables/{target}" },
    tags: ["Variables"],
    summary: "Create a variable of an environment",
    description:
      "An environment variable has `component_id` null. A name already used by another variable of the " +
      "environment itself is `409 conflict` (names are case-sensitive). Needs the project role `contributor` or above.",
    request: { params: EnvironmentParams, body: jsonBody(VariableWriteSchema) },
    responses: {
      201: {
        ...jsonContent(VariableSchema, "The new variable (without its value)."),
        headers: LOCATION_HEADER,
      },
    },
  });
  app.openapi(route, async (c) => {
    const variable = await createEnvironmentVariable(
      callerContext(c),
      c.req.valid("param").environment_id,
      c.req.valid("json"),
    );
    c.header("Location", `/v1/variables/${variable.id}`);
    return c.json(variable, 201);
  });
}
