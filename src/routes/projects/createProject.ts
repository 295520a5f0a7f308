import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { ProjectCreateSchema } from "../../schemas/project-writes";
import { createProject } from "../../services/projects/projects";
import { ProjectSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/projects",
    operationId: "createProject",
    lostAnswer: { rebuild: "record", from: "/v1/projects/{target}" },
    tags: ["Projects"],
    summary: "Create a project",
    description:
      "Needs the organization role `owner` or `admin` (else `403 unauthorized`). Also creates the project's " +
      "first environment, `production`, as its default, and makes you the project `owner`.",
    request: { body: jsonBody(ProjectCreateSchema) },
    responses: { 201: { ...jsonContent(ProjectSchema, "The new project."), headers: LOCATION_HEADER } },
  });
  app.openapi(route, async (c) => {
    const project = await createProject(callerContext(c), c.req.valid("json"));
    c.header("Location", `/v1/projects/${project.id}`);
    return c.json(project, 201);
  });
}
