import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { CreatedEnvironmentSchema } from "../../../schemas/topology";
import { EnvironmentNameBody } from "../../../schemas/topology-writes";
import { createEnvironmentInternal } from "../../../services/environments/environments";
import { ProjectIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/projects/{project_id}/environments",
    operationId: "internalCreateEnvironment",
    description:
      "Names are 1–100 characters, unique per project regardless of case (`409`, API_CONTRACT §23); an unknown " +
      "project is `404`.",
    request: { params: ProjectIdParams, body: jsonBody(EnvironmentNameBody) },
    responses: { 201: jsonContent(CreatedEnvironmentSchema, "The new environment.") },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(await createEnvironmentInternal(c.get("ctx"), project_id, c.req.valid("json")), 201);
  });
}
