import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import { pageRequest, SORT_VALUES } from "../../../db/pagination";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonContent } from "../../../openapi/define-route";
import { listQuery } from "../../../openapi/lists";
import { listAllDeployments } from "../../../services/deployments/all-projects";
import { statusFilterKey } from "../../../services/deployments/deployments";
import { deploymentListSchema, statusFilter } from "../../deployments/schema";

/** §4's list query and the public lists' status filter; oldest first unless `sort_by` says otherwise. */
const InternalDeploymentListQuery = listQuery().extend({
  status: statusFilter(),
  sort_by: z
    .preprocess((value) => (value === " created_at" ? "+created_at" : value), z.enum(SORT_VALUES))
    .default("created_at"),
});

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "get",
    path: "/internal/v1/deployments",
    operationId: "internalListDeployments",
    description:
      "The deployments of every project, oldest first: `?status=queued` is the work waiting for the engine, " +
      "whoever created it (a redeploy included). §4's `after` and `limit`.",
    request: { query: InternalDeploymentListQuery },
    responses: { 200: jsonContent(deploymentListSchema(), "A page of deployments.") },
  });
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const page = pageRequest(query, statusFilterKey(query.status));
    return c.json(await listAllDeployments(c.get("ctx"), { statuses: query.status }, page), 200);
  });
}
