import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { NO_STORE_HEADER } from "../../../openapi/components";
import { defineInternalRoute, jsonContent } from "../../../openapi/define-route";
import { InternalDeploymentConfigSchema } from "../../../schemas/config";
import { getDeploymentConfigInternal } from "../../../services/deployments/config";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "get",
    path: "/internal/v1/deployments/{id}/config",
    operationId: "internalGetDeploymentConfig",
    description:
      "What the engine deploys (API_CONTRACT §24): the deployment's pinned configuration with each variable's " +
      "`value`, never the variables as they are now. `Cache-Control: no-store`.",
    request: { params: IdParams },
    responses: {
      200: {
        ...jsonContent(InternalDeploymentConfigSchema, "The pinned configuration, with values."),
        headers: NO_STORE_HEADER,
      },
    },
  });
  app.openapi(route, async (c) => {
    const config = await getDeploymentConfigInternal(c.get("ctx"), c.req.valid("param").id);
    // Values of secrets: never kept by a cache between the service and the engine.
    c.header("cache-control", "no-store");
    return c.json(config, 200);
  });
}
