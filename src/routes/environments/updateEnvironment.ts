import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { EnvironmentUpdateSchema } from "../../schemas/topology-writes";
import { updateEnvironment } from "../../services/environments/environments";
import { EnvironmentParams, EnvironmentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "patch",
    path: "/v1/environments/{environment_id}",
    operationId: "updateEnvironment",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Environments"],
    summary: "Rename an environment",
    description:
      "A name unique within the project regardless of case (`409` otherwise). Project role `owner`.",
    request: { params: EnvironmentParams, body: jsonBody(EnvironmentUpdateSchema) },
    responses: { 200: jsonContent(EnvironmentSchema, "The renamed environment.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await updateEnvironment(callerContext(c), environment_id, c.req.valid("json")), 200);
  });
}
