import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { NO_STORE_HEADER } from "../../openapi/components";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { VariableValueSchema } from "../../schemas/variable";
import { revealVariable } from "../../services/variables/values";
import { VariableParams } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/variables/{variable_id}/value",
    operationId: "revealVariable",
    tags: ["Variables"],
    summary: "Read the decrypted current value of a variable",
    description:
      'Answers `{ "value": … }`. Needs the project role `contributor` or above (a `viewer` is ' +
      "`403 forbidden`). Rate-limited by the `reveal` policy (20 per minute per key). The response is " +
      "marked `Cache-Control: no-store`.",
    rateLimit: "reveal",
    scope: "variables:reveal",
    request: { params: VariableParams },
    responses: {
      200: { ...jsonContent(VariableValueSchema, "The decrypted value."), headers: NO_STORE_HEADER },
    },
  });
  app.openapi(route, async (c) => {
    const value = await revealVariable(callerContext(c), c.req.valid("param").variable_id);
    // A secret must not linger in any cache between the service and the client.
    c.header("cache-control", "no-store");
    return c.json(value, 200);
  });
}
