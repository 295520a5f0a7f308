/** Internal API: events the deployment engine and dashboard report (API_CONTRACT §8, §9). */

import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { createDb } from "../../db/client";
import type { AppEnv } from "../../env";
import { loggableError } from "../../http/errors";
import { jsonBody, jsonContent } from "../../http/openapi";
import { INTERNAL_EVENT_TYPES, publishEvent, recordEvent } from "../../services/events";
import { defineInternalRoute, ProjectIdParams } from "./schema";

const EventCreateBody = z.strictObject({
  type: z.enum(INTERNAL_EVENT_TYPES),
  data: z.record(z.string(), z.unknown()).default({}),
});

export function registerInternalEventsRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/projects/{project_id}/events",
      request: { params: ProjectIdParams, body: jsonBody(EventCreateBody) },
      responses: { 202: jsonContent(z.object({ id: z.string() }), "Accepted; `id` is the `webhook-id`.") },
    }),
    async (c) => {
      const { type, data } = c.req.valid("json");
      const event = await recordEvent(createDb(c.env.DB), c.req.valid("param").project_id, type, data);
      // The event is durable already; if this send fails, the consumer's stale-event sweep sends it.
      c.executionCtx.waitUntil(
        publishEvent(c.env.EVENTS, event.id).catch((err: unknown) =>
          console.error(
            JSON.stringify({ msg: "publishEvent failed", event_id: event.id, error: loggableError(err) }),
          ),
        ),
      );
      return c.json({ id: event.id }, 202);
    },
  );
}
