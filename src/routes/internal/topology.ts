/** Internal API: environments, components and stacks (API_CONTRACT §9). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { jsonBody, jsonContent } from "../../http/openapi";
import { createComponent, createEnvironment, createStack } from "../../services/topology";
import {
  AnyRecord,
  defineInternalRoute,
  EnvironmentIdParams,
  NameBody,
  ProjectIdParams,
  StackCreateBody,
} from "./schema";

const created = jsonContent(AnyRecord, "Created.");

export function registerInternalTopologyRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/projects/{project_id}/environments",
      request: { params: ProjectIdParams, body: jsonBody(NameBody) },
      responses: { 201: created },
    }),
    async (c) => {
      const { project_id } = c.req.valid("param");
      return c.json(await createEnvironment(c.get("ctx"), project_id, c.req.valid("json").name), 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/environments/{environment_id}/components",
      request: { params: EnvironmentIdParams, body: jsonBody(NameBody) },
      responses: { 201: created },
    }),
    async (c) => {
      const { environment_id } = c.req.valid("param");
      return c.json(await createComponent(c.get("ctx"), environment_id, c.req.valid("json").name), 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/environments/{environment_id}/stacks",
      request: { params: EnvironmentIdParams, body: jsonBody(StackCreateBody) },
      responses: { 201: created },
    }),
    async (c) => {
      const { environment_id } = c.req.valid("param");
      return c.json(await createStack(c.get("ctx"), environment_id, c.req.valid("json")), 201);
    },
  );
}
