/** API_CONTRACT §18: an environment's own variables as a dotenv file (a reveal). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { exportVariables } from "../../services/variables/export";
import { EnvironmentParams } from "./schema";
import { dotenvResponse, ENVIRONMENT_VARIABLES, environmentOf, exportVariables as exportRoute } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...exportRoute,
    path: `${ENVIRONMENT_VARIABLES}/export`,
    operationId: "exportEnvironmentVariables",
    request: { params: EnvironmentParams },
  });
  app.openapi(route, async (c) => {
    const file = await exportVariables(callerContext(c), environmentOf(c.req.valid("param")));
    return dotenvResponse(c, file);
  });
}
