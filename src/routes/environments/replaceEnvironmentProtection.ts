import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { ProtectionSchema } from "../../schemas/protection";
import { ProtectionReplaceSchema } from "../../schemas/protection-writes";
import { replaceEnvironmentProtection } from "../../services/environments/protection";
import { EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "put",
    path: "/v1/environments/{environment_id}/protection",
    operationId: "replaceEnvironmentProtection",
    lostAnswer: { rebuild: "record", from: "request-path" },
    tags: ["Environments"],
    summary: "Replace an environment's protection",
    description:
      "The five settings, all required. They apply to deployments created from now on: a deployment already " +
      "`waiting` keeps its `required_approvals` and `wait_until`. The lock is unchanged (it has its own operations). " +
      "Project role `owner`.",
    request: { params: EnvironmentParams, body: jsonBody(ProtectionReplaceSchema) },
    responses: { 200: jsonContent(ProtectionSchema, "The protection.") },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    return c.json(
      await replaceEnvironmentProtection(callerContext(c), environment_id, c.req.valid("json")),
      200,
    );
  });
}
