import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { getProject } from "../../services/projects/reads";
import { ProjectParams, ProjectSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}",
    operationId: "getProject",
    tags: ["Projects"],
    summary: "Read a project",
    description:
      "A project the caller may see; one it may not see answers `404`, like one that does not exist.",
    request: { params: ProjectParams },
    responses: { 200: jsonContent(ProjectSchema, "The project.") },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    return c.json(await getProject(callerContext(c), project_id), 200);
  });
}
