/** API_CONTRACT §18: a component's variables as they were after a version. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { restoreVariableVersion } from "../../services/variables/sets";
import { restoreVersion } from "./set-writes";
import { COMPONENT_VARIABLES, ComponentVersionParams, componentOf } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...restoreVersion,
    path: `${COMPONENT_VARIABLES}/versions/{version}/restore`,
    operationId: "restoreComponentVariableVersion",
    lostAnswer: { rebuild: "none", why: "a change result describes that request alone" },
    request: { ...restoreVersion.request, params: ComponentVersionParams },
  });
  app.openapi(route, async (c) => {
    const params = c.req.valid("param");
    const result = await restoreVariableVersion(
      callerContext(c),
      componentOf(params),
      params.version,
      c.req.valid("json"),
    );
    return c.json(result, 200);
  });
}
