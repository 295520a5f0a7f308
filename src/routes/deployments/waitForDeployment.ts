import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { waitForDeployment } from "../../services/deployments/wait";
import { DeploymentParams, DeploymentSchema, WaitQuerySchema } from "./schema";

export const waitForDeploymentRoute = defineRoute({
  method: "get",
  path: "/v1/deployments/{id}/wait",
  operationId: "waitForDeployment",
  tags: ["Deployments"],
  summary: "Wait until a deployment is final",
  description:
    "The deployment once final, or as it stands after `timeout` seconds. One request; no query while " +
    "idle. Project role `viewer` or above.",
  request: { params: DeploymentParams, query: WaitQuerySchema },
  responses: { 200: jsonContent(DeploymentSchema, "The deployment.") },
});

export function registerWaitForDeployment(app: OpenAPIHono<AppEnv>) {
  app.openapi(waitForDeploymentRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { timeout } = c.req.valid("query");
    return c.json(await waitForDeployment(callerContext(c), id, timeout * 1000), 200);
  });
}
