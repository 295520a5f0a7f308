import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonContent } from "../../../openapi/define-route";
import { MoveSchema } from "../../../schemas/move";
import { cancelMove } from "../../../services/moves/moves";
import { IdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/moves/{id}/cancel",
    operationId: "internalCancelMove",
    description:
      "Stops a move that is `copying` and removes what it copied before answering; `409` once it is " +
      "`switching` or finished.",
    request: { params: IdParams },
    responses: { 200: jsonContent(MoveSchema, "The move, `cancelled`.") },
  });
  app.openapi(route, async (c) => c.json(await cancelMove(c.get("ctx"), c.req.valid("param").id), 200));
}
