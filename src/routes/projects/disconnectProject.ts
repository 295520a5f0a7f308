import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { disconnectProject } from "../../services/projects/disconnect";
import { ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "patch",
    path: "/v1/projects/{project_id}/disconnect",
    operationId: "disconnectProject",
    lostAnswer: { rebuild: "status" },
    tags: ["Projects"],
    summary: "Disconnect a project from its cloud provider",
    description:
      "Moves a `connected` project to `disconnecting` and answers at once; the work finishes asynchronously " +
      "and the project then reads `disconnected`. Any other state is `409 conflict`. Needs the project role `owner`.",
    request: { params: ProjectParams },
    responses: { 204: { description: "Disconnect started." } },
  });
  app.openapi(route, async (c) => {
    const { project_id } = c.req.valid("param");
    await disconnectProject(callerContext(c), project_id);
    return c.body(null, 204);
  });
}
