/** Internal API: events the deployment engine and dashboard report (API_CONTRACT §8, §9). */

import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { jsonBody, jsonContent } from "../../http/openapi";
import { INTERNAL_EVENT_TYPES, recordEvent } from "../../services/events";
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
      const event = await recordEvent(c.get("ctx"), c.req.valid("param").project_id, type, data);
      return c.json({ id: event.id }, 202);
    },
  );
}
