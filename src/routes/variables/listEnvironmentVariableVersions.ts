/** API_CONTRACT §18: the versions of an environment's own variables. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { numberedPageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listVariableVersions } from "../../services/variables/versions";
import { EnvironmentParams } from "./schema";
import { ENVIRONMENT_VARIABLES, environmentOf, listVersions } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...listVersions,
    path: `${ENVIRONMENT_VARIABLES}/versions`,
    operationId: "listEnvironmentVariableVersions",
    request: { params: EnvironmentParams, query: listQuery() },
  });
  app.openapi(route, async (c) => {
    const page = numberedPageRequest(c.req.valid("query"));
    return c.json(
      await listVariableVersions(callerContext(c), environmentOf(c.req.valid("param")), page),
      200,
    );
  });
}
