import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { EnvironmentCreateSchema } from "../../schemas/topology-writes";
import { createEnvironment } from "../../services/environments/environments";
import { EnvironmentSchema, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/projects/{project_id}/environments",
    operationId: "createEnvironment",
    lostAnswer: { rebuild: "record", from: "/v1/environments/{target}" },
    tags: ["Environments"],
    summary: "Create an environment",
    description:
      "A name unique within the project regardless of case (`409` otherwise). With `copy_variables_from`, the new " +
      "environment starts with a copy of that environment's own variables (names, types and values) as its version 1; " +
      "without it, empty at version 0. Project role `owner`.",
    request: { params: ProjectParams, body: jsonBody(EnvironmentCreateSchema) },
    responses: {
      201: { ...jsonContent(EnvironmentSchema, "The new environment."), headers: LOCATION_HEADER },
    },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    const environment = await createEnvironment(callerContext(c), project_id, c.req.valid("json"));
    c.header("Location", `/v1/environments/${environment.id}`);
    return c.json(environment, 201);
  });
}
