/** API_CONTRACT §18: a component's variables as a dotenv file (a reveal). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { exportVariables } from "../../services/variables/export";
import { ComponentParams } from "./schema";
import { COMPONENT_VARIABLES, componentOf, dotenvResponse, exportVariables as exportRoute } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...exportRoute,
    path: `${COMPONENT_VARIABLES}/export`,
    operationId: "exportComponentVariables",
    request: { params: ComponentParams },
  });
  app.openapi(route, async (c) => {
    const file = await exportVariables(callerContext(c), componentOf(c.req.valid("param")));
    return dotenvResponse(c, file);
  });
}
