import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { redeployDeployment } from "../../services/deployments/redeploy";
import { DeploymentParams, DeploymentSchema } from "./schema";

/** No options yet: an empty object, or no body at all. */
const RedeployBodySchema = z.strictObject({}).openapi("RedeployRequest");

export const redeployDeploymentRoute = defineRoute({
  method: "post",
  path: "/v1/deployments/{id}/redeploy",
  operationId: "redeployDeployment",
  lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
  tags: ["Deployments"],
  summary: "Run a deployment again",
  description:
    "A new `queued` deployment of the same environment with exactly the original's `stack_ids`, `data.patch` " +
    "and `data.source`, `redeploy_of` the original; from any status (retry a failure, roll back to an older " +
    "success). A stack deleted since is `409`, `cause` `stack_ids.<index>`. Project role `contributor`.",
  request: { params: DeploymentParams, body: optionalJsonBody(RedeployBodySchema) },
  responses: {
    201: { ...jsonContent(DeploymentSchema, "The new deployment."), headers: LOCATION_HEADER },
  },
});

export function registerRedeployDeployment(app: OpenAPIHono<AppEnv>) {
  app.openapi(redeployDeploymentRoute, async (c) => {
    const deployment = await redeployDeployment(callerContext(c), c.req.valid("param").id);
    c.header("Location", `/v1/deployments/${deployment.id}`);
    return c.json(deployment, 201);
  });
}
