import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { ReviewCreateSchema } from "../../schemas/protection-writes";
import { reviewDeployment } from "../../services/deployments/reviews";
import { DeploymentParams, DeploymentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/deployments/{id}/reviews",
    operationId: "reviewDeployment",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Approve or reject a waiting deployment",
    description:
      "Reviewers: the project's members whose role is at least the environment's `reviewer_role`, and org owners and " +
      "admins (another account `403`); the account that created the deployment is `403` under " +
      "`prevent_self_review`. The deployment must be `waiting` with `approval` in `gate.blocked_by` (else `409`); one " +
      "review per account (`409`). The approval that completes the count releases it (`queued`) when nothing else " +
      "holds it; a rejection cancels it and every stack. Answers the deployment.",
    request: { params: DeploymentParams, body: jsonBody(ReviewCreateSchema) },
    responses: { 200: jsonContent(DeploymentSchema, "The deployment, as the review leaves it.") },
  });
  app.openapi(route, async (c) => {
    return c.json(
      await reviewDeployment(callerContext(c), c.req.valid("param").id, c.req.valid("json")),
      200,
    );
  });
}
