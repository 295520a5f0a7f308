import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listIntegrationDeliveries } from "../../services/integrations/deliveries";
import { deliveryListSchema } from "./delivery-schema";
import { IntegrationParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries",
    operationId: "listIntegrationDeliveries",
    tags: ["Notification integrations"],
    summary: "List the deliveries of an integration",
    description:
      "An extension to SPEC.md: one record per event sent to this integration, newest first by default, " +
      "each with every attempt (status code or error, duration, next attempt time), so you can see what " +
      "was sent and why it failed. Needs the project role `viewer` or above.",
    request: { params: IntegrationParams, query: listQuery() },
    responses: { 200: jsonContent(deliveryListSchema(), "A page of deliveries.") },
  });
  app.openapi(route, async (c) => {
    const { project_id, integration_id } = c.req.valid("param");
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listIntegrationDeliveries(callerContext(c), project_id, integration_id, page), 200);
  });
}
