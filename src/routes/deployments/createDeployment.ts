import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { PublicDeploymentCreateBody } from "../../schemas/deployment-writes";
import { createDeployment } from "../../services/deployments/create";
import { DeploymentSchema, EnvironmentParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/environments/{environment_id}/deployments",
    operationId: "createDeployment",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Start a deployment",
    description:
      "A new `queued` deployment of stacks of the environment, with the engine's rules: every stack must be the " +
      "environment's (`400`, `cause` `stack_ids.<index>`). `stack_ids` left out: every stack of the environment in " +
      "creation order (`409` when it has none). The engine finds it in its queued list. Project role `contributor`.",
    request: { params: EnvironmentParams, body: jsonBody(PublicDeploymentCreateBody) },
    responses: {
      201: { ...jsonContent(DeploymentSchema, "The new deployment."), headers: LOCATION_HEADER },
    },
  });
  app.openapi(route, async (c) => {
    const { environment_id } = c.req.valid("param");
    const deployment = await createDeployment(callerContext(c), environment_id, c.req.valid("json"));
    c.header("Location", `/v1/deployments/${deployment.id}`);
    return c.json(deployment, 201);
  });
}
