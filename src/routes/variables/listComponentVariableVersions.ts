/** API_CONTRACT §18: the versions of a component's variables. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { numberedPageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listVariableVersions } from "../../services/variables/versions";
import { ComponentParams } from "./schema";
import { COMPONENT_VARIABLES, componentOf, listVersions } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...listVersions,
    path: `${COMPONENT_VARIABLES}/versions`,
    operationId: "listComponentVariableVersions",
    request: { params: ComponentParams, query: listQuery() },
  });
  app.openapi(route, async (c) => {
    const page = numberedPageRequest(c.req.valid("query"));
    return c.json(await listVariableVersions(callerContext(c), componentOf(c.req.valid("param")), page), 200);
  });
}
