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
    "Answers the deployment record as soon as it is final (`succeeded`, `failed` or `cancelled`; at once " +
    "if it already is), or as it stands after `timeout` seconds: check `status` and call again to keep " +
    "waiting. Counts as one request against the rate limit, and costs no query while the deployment does " +
    "not change. Needs the project role `viewer` or above.",
  request: { params: DeploymentParams, query: WaitQuerySchema },
  responses: { 200: jsonContent(DeploymentSchema, "The deployment: final, or as it stands at the timeout.") },
});

export function registerWaitForDeployment(app: OpenAPIHono<AppEnv>) {
  app.openapi(waitForDeploymentRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { timeout } = c.req.valid("query");
    return c.json(await waitForDeployment(callerContext(c), id, timeout * 1000), 200);
  });
}
