/** API_CONTRACT §18: one version of an environment's own variables. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { getVariableVersion } from "../../services/variables/versions";
import { ENVIRONMENT_VARIABLES, EnvironmentVersionParams, environmentOf, getVersion } from "./sets";

const getEnvironmentVariableVersionRoute = defineRoute({
  ...getVersion,
  path: `${ENVIRONMENT_VARIABLES}/versions/{version}`,
  operationId: "getEnvironmentVariableVersion",
  request: { params: EnvironmentVersionParams },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(getEnvironmentVariableVersionRoute, async (c) => {
    const params = c.req.valid("param");
    return c.json(await getVariableVersion(callerContext(c), environmentOf(params), params.version), 200);
  });
}
