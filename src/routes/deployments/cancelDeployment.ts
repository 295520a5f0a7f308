import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { CONTENT_LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { cancelDeployment } from "../../services/deployments/transitions";
import { DeploymentParams, DeploymentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "patch",
    path: "/v1/deployments/{id}/cancel",
    operationId: "cancelDeployment",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Cancel a deployment",
    description:
      "Moves a `queued` or `in_progress` deployment, and each of its unfinished stacks, to `cancelled`. " +
      "A finished deployment, or one that changes status while this request runs, is `409 conflict`. " +
      "Needs the project role `contributor` or above.",
    request: { params: DeploymentParams },
    responses: {
      200: {
        ...jsonContent(DeploymentSchema, "The cancelled deployment."),
        headers: CONTENT_LOCATION_HEADER,
      },
    },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const deployment = await cancelDeployment(callerContext(c), id);
    // The record it carries lives at another path (an idempotent replay re-reads it there).
    c.header("Content-Location", `/v1/deployments/${id}`);
    return c.json(deployment, 200);
  });
}
