import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { EnvironmentSchema, NameBody } from "../../../schemas/topology";
import { createEnvironment } from "../../../services/topology";
import { ProjectIdParams } from "../schema";

export const internalCreateEnvironmentRoute = defineInternalRoute({
  method: "post",
  path: "/internal/v1/projects/{project_id}/environments",
  operationId: "internalCreateEnvironment",
  description: "Names are unique per project (`409`); an unknown project is `404`.",
  request: { params: ProjectIdParams, body: jsonBody(NameBody) },
  responses: { 201: jsonContent(EnvironmentSchema, "The new environment.") },
});

export function registerInternalCreateEnvironment(app: OpenAPIHono<AppEnv>) {
  app.openapi(internalCreateEnvironmentRoute, async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(await createEnvironment(c.get("ctx"), project_id, c.req.valid("json")), 201);
  });
}
