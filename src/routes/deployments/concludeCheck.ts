import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonBody, jsonContent } from "../../openapi/define-route";
import { MAX_URL_BYTES } from "../../openapi/primitives";
import { CheckConclusionSchema } from "../../schemas/protection-writes";
import { concludeCheck } from "../../services/deployments/checks";
import { DeploymentParams, DeploymentSchema } from "./schema";

const CheckParams = DeploymentParams.extend({
  // Any string: a name the gate does not hold is `404`, however it is spelled (§31). The bounds are
  // the URL's own (no longer path reaches a route), so they refuse nothing a request can carry.
  name: z
    .string()
    .min(1)
    .max(MAX_URL_BYTES)
    .regex(/^[\s\S]+$/)
    .openapi({ param: { name: "name", in: "path" }, example: "e2e-suite" }),
});

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "post",
    path: "/v1/deployments/{id}/checks/{name}",
    operationId: "concludeCheck",
    lostAnswer: { rebuild: "record", from: "/v1/deployments/{target}" },
    tags: ["Deployments"],
    summary: "Conclude a deployment check",
    description:
      "Project role `contributor` (the deployment's creator may). A name the gate does not hold is `404`; a check " +
      "already concluded, or a deployment no longer `waiting`, `409`. `failed` cancels it; the last pass releases it.",
    request: { params: CheckParams, body: jsonBody(CheckConclusionSchema) },
    responses: { 200: jsonContent(DeploymentSchema, "The deployment, as the conclusion leaves it.") },
  });
  app.openapi(route, async (c) => {
    const { id, name } = c.req.valid("param");
    return c.json(await concludeCheck(callerContext(c), id, name, c.req.valid("json")), 200);
  });
}
