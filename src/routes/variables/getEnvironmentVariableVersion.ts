/** API_CONTRACT §18: one version of an environment's own variables. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { getVariableVersion } from "../../services/variables/versions";
import { ENVIRONMENT_VARIABLES, EnvironmentVersionParams, environmentOf, getVersion } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...getVersion,
    path: `${ENVIRONMENT_VARIABLES}/versions/{version}`,
    operationId: "getEnvironmentVariableVersion",
    request: { params: EnvironmentVersionParams },
  });
  app.openapi(route, async (c) => {
    const params = c.req.valid("param");
    return c.json(await getVariableVersion(callerContext(c), environmentOf(params), params.version), 200);
  });
}
