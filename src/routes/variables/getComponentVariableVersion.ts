/** API_CONTRACT §18: one version of a component's variables. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { getVariableVersion } from "../../services/variables/versions";
import { COMPONENT_VARIABLES, ComponentVersionParams, componentOf, getVersion } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...getVersion,
    path: `${COMPONENT_VARIABLES}/versions/{version}`,
    operationId: "getComponentVariableVersion",
    request: { params: ComponentVersionParams },
  });
  app.openapi(route, async (c) => {
    const params = c.req.valid("param");
    return c.json(await getVariableVersion(callerContext(c), componentOf(params), params.version), 200);
  });
}
