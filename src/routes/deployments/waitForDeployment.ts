import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { waitForDeployment } from "../../services/deployments/wait";
import { DeploymentParams, DeploymentSchema } from "./schema";

const WAIT_MAX_SECONDS = 60;
const WAIT_DEFAULT_SECONDS = 30;

const WaitQuerySchema = z.object({
  // Seconds, as a decimal number (`timeout=2.5` too): nothing asks for whole seconds.
  timeout: z
    .preprocess(
      (value) => (typeof value === "string" && !/^[0-9]+(\.[0-9]+)?$/.test(value) ? Number.NaN : value),
      z.coerce.number().min(1).max(WAIT_MAX_SECONDS).default(WAIT_DEFAULT_SECONDS),
    )
    .openapi({
      param: { name: "timeout", in: "query" },
      description: `Seconds, 1–${WAIT_MAX_SECONDS}.`,
      type: "number",
      minimum: 1,
      maximum: WAIT_MAX_SECONDS,
      default: WAIT_DEFAULT_SECONDS,
      example: WAIT_DEFAULT_SECONDS,
    }),
});

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
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
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { timeout } = c.req.valid("query");
    return c.json(await waitForDeployment(callerContext(c), id, timeout * 1000), 200);
  });
}
