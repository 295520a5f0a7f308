import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { deleteProject } from "../../services/projects/projects";
import { ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/projects/{project_id}",
    operationId: "deleteProject",
    lostAnswer: { rebuild: "status" },
    tags: ["Projects"],
    summary: "Delete a project and everything inside it",
    description: "Needs the project role `owner`. The name is free again at once.",
    request: { params: ProjectParams },
    responses: { 204: { description: "Deleted." } },
  });
  app.openapi(route, async (c) => {
    await deleteProject(callerContext(c), c.req.valid("param").project_id);
    return c.body(null, 204);
  });
}
