import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { unlockEnvironment } from "../../services/environments/lock";
import { EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "delete",
    path: "/v1/environments/{environment_id}/lock",
    operationId: "unlockEnvironment",
    lostAnswer: { rebuild: "status" },
    tags: ["Environments"],
    summary: "Unlock an environment",
    description:
      "`204`, locked or not. Every waiting deployment that nothing else holds is released (`queued`) in this " +
      "request. Project role `owner`.",
    request: { params: EnvironmentParams },
    responses: { 204: { description: "Unlocked." } },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    await unlockEnvironment(callerContext(c), environment_id);
    return c.body(null, 204);
  });
}
