import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { deleteEnvironment } from "../../services/environments/delete";
import { EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/environments/{environment_id}",
    operationId: "deleteEnvironment",
    lostAnswer: { rebuild: "status" },
    tags: ["Environments"],
    summary: "Delete an environment and everything in it",
    description:
      "Its components, stacks and their resources, deployments and their timelines, variables and their versions, " +
      "in one atomic step. `409` for the project's default environment, and while a deployment of it is `waiting`, " +
      "`queued` or `in_progress`. Project role `owner`.",
    request: { params: EnvironmentParams },
    responses: { 204: { description: "Deleted." } },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    await deleteEnvironment(callerContext(c), environment_id);
    return c.body(null, 204);
  });
}
