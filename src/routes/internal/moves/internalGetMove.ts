import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonContent } from "../../../openapi/define-route";
import { MoveSchema } from "../../../schemas/move";
import { getMove } from "../../../services/moves/moves";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "get",
    path: "/internal/v1/moves/{id}",
    operationId: "internalGetMove",
    description: "A move of an organization to another database (API_CONTRACT §32), as it stands.",
    request: { params: IdParams },
    responses: { 200: jsonContent(MoveSchema, "The move.") },
  });
  app.openapi(route, async (c) => c.json(await getMove(c.get("ctx"), c.req.valid("param").id), 200));
}
