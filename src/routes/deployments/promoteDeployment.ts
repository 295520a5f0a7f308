import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { LOCATION_HEADER } from "../../openapi/components";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { PromoteBody, PromotionPlanSchema } from "../../schemas/promotion-writes";
import { promoteDeployment } from "../../services/deployments/promote";
import { DeploymentParams, DeploymentSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/deployments/{id}/promote",
    operationId: "promoteDeployment",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Promote a succeeded deployment to another environment",
    description:
      "A new deployment of `environment_id` (another environment of the project, else `400`) with the original's " +
      "`data.patch` and `data.source` (nothing is rebuilt), its stacks mapped by `template_id` (a stack with no match " +
      "or more than one: `409`, one `cause` item `stack_ids.<index>` each), and the target environment's own " +
      "configuration as it is now: configuration belongs to the environment. Only a `succeeded` deployment (`409` " +
      "otherwise). Emits `promotion.created`. With `dry_run`, the same checks and refusals, then `200` the plan: the " +
      "stack mapping and, per scope (components matched by name), the variable names the target lacks or has in " +
      "addition; nothing is created, emitted or recorded. Project role `contributor`.",
    request: { params: DeploymentParams, body: jsonBody(PromoteBody) },
    responses: {
      201: { ...jsonContent(DeploymentSchema, "The new deployment."), headers: LOCATION_HEADER },
      200: jsonContent(PromotionPlanSchema, "The plan (`dry_run`)."),
    },
  });
  app.openapi(route, async (c) => {
    const result = await promoteDeployment(callerContext(c), c.req.valid("param").id, c.req.valid("json"));
    if ("plan" in result) return c.json(result.plan, 200);
    c.header("Location", `/v1/deployments/${result.deployment.id}`);
    return c.json(result.deployment, 201);
  });
}
