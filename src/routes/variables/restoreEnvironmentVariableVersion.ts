/** API_CONTRACT §18: an environment's own variables as they were after a version. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { restoreVariableVersion } from "../../services/variables/sets";
import { restoreVersion } from "./set-writes";
import { ENVIRONMENT_VARIABLES, EnvironmentVersionParams, environmentOf } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...restoreVersion,
    path: `${ENVIRONMENT_VARIABLES}/versions/{version}/restore`,
    operationId: "restoreEnvironmentVariableVersion",
    lostAnswer: { rebuild: "none", why: "a change result describes that request alone" },
    request: { ...restoreVersion.request, params: EnvironmentVersionParams },
  });
  app.openapi(route, async (c) => {
    const params = c.req.valid("param");
    const result = await restoreVariableVersion(
      callerContext(c),
      environmentOf(params),
      params.version,
      c.req.valid("json"),
    );
    return c.json(result, 200);
  });
}
