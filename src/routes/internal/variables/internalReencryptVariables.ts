/** The variable-key rotation sweep (docs/operating.md "Rotating VARIABLES_KEY"). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { reencryptEverywhere } from "../../../services/variables/reencrypt";

const ReencryptBody = z.strictObject({ limit: z.number().int().min(1).max(500).optional() });

const ReencryptResultSchema = z.object({
  key_version: z.number().int(),
  previous_key_version: z.number().int().nullable(),
  reencrypted: z.number().int(),
  remaining: z.boolean(),
});

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/variables/reencrypt",
    operationId: "internalReencryptVariables",
    request: { body: { ...jsonBody(ReencryptBody), required: false } },
    responses: {
      200: jsonContent(
        ReencryptResultSchema,
        "How many values (and webhook signing secrets) moved to the current key; repeat while `remaining`.",
      ),
    },
  });
  app.openapi(route, async (c) => {
    const { limit } = c.req.valid("json");
    return c.json(await reencryptEverywhere(c.get("ctx"), limit ?? 100), 200);
  });
}
