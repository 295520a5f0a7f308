import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { ProjectReplaceSchema } from "../../schemas/project-writes";
import { replaceProject } from "../../services/projects/projects";
import { ProjectParams, ProjectSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "put",
    path: "/v1/projects/{project_id}",
    operationId: "replaceProject",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Projects"],
    summary: "Replace a project",
    description:
      "A full replace: `name` and `default_environment_id` are required; `description`, `icon` and `repo_id` " +
      "left out become null. Needs the project role `owner`.",
    request: { params: ProjectParams, body: jsonBody(ProjectReplaceSchema) },
    responses: { 200: jsonContent(ProjectSchema, "The replaced project.") },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    const project = await replaceProject(callerContext(c), project_id, c.req.valid("json"));
    return c.json(project, 200);
  });
}
