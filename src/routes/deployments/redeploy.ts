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
  tags: ["Deployments"],
  summary: "Run a deployment again",
  description:
    "A new `queued` deployment in the same environment with exactly the original's `stack_ids`, `data.patch` " +
    "and `data.source`, every stack `queued`, and `redeploy_of` naming the original. From any status of the " +
    "original: redeploying a failed one retries it, an older succeeded one rolls back to it. A stack of the " +
    "original that no longer exists is `409 conflict` naming it (`cause` path `stack_ids.<index>`). Send an " +
    "`Idempotency-Key` so that a retried request makes one deployment. Needs the project role `contributor` " +
    "or above.",
  request: { params: DeploymentParams, body: optionalJsonBody(RedeployBodySchema, "No body, or `{}`.") },
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
