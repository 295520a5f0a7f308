/** Events the deployment engine and dashboard report (API_CONTRACT §8, §9). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { IdSchema } from "../../../openapi/primitives";
import { EventCreateBody } from "../../../schemas/event-writes";
import { createEvent } from "../../../services/events/write";
import { ProjectIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/projects/{project_id}/events",
    operationId: "internalCreateEvent",
    description: "Written at once, delivered later to every integration of the project whose flag is on.",
    request: { params: ProjectIdParams, body: jsonBody(EventCreateBody) },
    responses: { 202: jsonContent(z.object({ id: IdSchema }), "Accepted; `id` is the `webhook-id`.") },
  });
  app.openapi(route, async (c) => {
    const event = await createEvent(c.get("ctx"), c.req.valid("param").project_id, c.req.valid("json"));
    return c.json({ id: event.id }, 202);
  });
}
