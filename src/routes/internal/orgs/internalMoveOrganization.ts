import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { LOCATION_HEADER } from "../../../openapi/components";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { MoveCreateBody, MoveSchema } from "../../../schemas/move";
import { startMove } from "../../../services/moves/moves";
import { OrgIdParams } from "../schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/orgs/{org_id}/moves",
    operationId: "internalMoveOrganization",
    description:
      "Moves the organization to the database `to` while it keeps working (API_CONTRACT §32); follow it at " +
      "`Location`. `409` while another move of it is not finished.",
    request: { params: OrgIdParams, body: jsonBody(MoveCreateBody) },
    responses: {
      202: { ...jsonContent(MoveSchema, "The move, `copying`."), headers: { ...LOCATION_HEADER } },
    },
  });
  app.openapi(route, async (c) => {
    const move = await startMove(c.get("ctx"), c.req.valid("param").org_id, c.req.valid("json").to);
    c.header("Location", `/internal/v1/moves/${move.id}`);
    return c.json(move, 202);
  });
}
