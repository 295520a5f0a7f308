/** API_CONTRACT §13: a project's event log, to reconcile from. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { envelope } from "../../openapi/lists";
import { EventSchema } from "../../schemas/event";
import { listProjectEvents, typeFilterKey } from "../../services/events/log";
import { eventListQuery, ProjectParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects/{project_id}/events",
    operationId: "listProjectEvents",
    tags: ["Events"],
    summary: "List the events of a project",
    description:
      "Every event of the last 30 days (older ones are deleted daily), newest first by default, to reconcile from " +
      "when a receiver missed deliveries. Needs the project role `viewer` or above.",
    request: { params: ProjectParams, query: eventListQuery() },
    responses: { 200: jsonContent(envelope(EventSchema, "EventList"), "A page of events.") },
  });
  app.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const page = pageRequest(query, typeFilterKey(query.type));
    const projectId = c.req.valid("param").project_id;
    return c.json(await listProjectEvents(callerContext(c), projectId, query.type, page), 200);
  });
}
