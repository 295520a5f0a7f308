import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { ProtectionSchema } from "../../schemas/protection";
import { LockSchema } from "../../schemas/protection-writes";
import { lockEnvironment } from "../../services/environments/lock";
import { EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/environments/{environment_id}/lock",
    operationId: "lockEnvironment",
    lostAnswer: { rebuild: "record", from: "/v1/environments/{target}/protection" },
    ifMatch: true,
    tags: ["Environments"],
    summary: "Lock an environment",
    description:
      "While locked, new deployments wait (`blocked_by` `lock`), queued ones leave the engine's queued list and none " +
      "moves to `in_progress`; deployments already `in_progress` finish. `409` when already locked. Project role " +
      "`owner`.",
    request: { params: EnvironmentParams, body: jsonBody(LockSchema) },
    responses: { 200: jsonContent(ProtectionSchema, "The protection, locked.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(await lockEnvironment(callerContext(c), environment_id, c.req.valid("json")), 200);
  });
}
