import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent, optionalJsonBody } from "../../openapi/define-route";
import { RedeployBody } from "../../schemas/promotion-writes";
import { redeployDeployment } from "../../services/deployments/redeploy";
import { DeploymentParams, DeploymentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/deployments/{id}/redeploy",
    operationId: "redeployDeployment",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Run a deployment again",
    description:
      "A new `queued` deployment of the same environment with exactly the original's `stack_ids`, `data.patch` " +
      "and `data.source`, `redeploy_of` the original; from any status (retry a failure, roll back to an older " +
      "success). `config`: `pinned` (the default when the original has one) runs it with the original's configuration, " +
      "rolling back code and configuration together; `current` with the variables as they are now; `pinned` for an " +
      "original without a configuration is `409`. A stack deleted since is `409`, `cause` `stack_ids.<index>`. " +
      "Project role `contributor`.",
    request: { params: DeploymentParams, body: optionalJsonBody(RedeployBody) },
    responses: {
      201: { ...jsonContent(DeploymentSchema, "The new deployment."), headers: LOCATION_HEADER },
    },
  });
  app.openapi(route, async (c) => {
    const deployment = await redeployDeployment(
      callerContext(c),
      c.req.valid("param").id,
      c.req.valid("json"),
    );
    c.header("Location", `/v1/deployments/${deployment.id}`);
    return c.json(deployment, 201);
  });
}
