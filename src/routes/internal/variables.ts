/** Internal API: the variable-key rotation sweep (README "Rotating VARIABLES_KEY"). */
import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { jsonBody, jsonContent } from "../../http/openapi";
import { reencryptVariables } from "../../services/variables";
import { AnyRecord, defineInternalRoute } from "./schema";

const ReencryptBody = z.strictObject({ limit: z.number().int().min(1).max(500).optional() });

export function registerInternalVariablesRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/variables/reencrypt",
      request: { body: { ...jsonBody(ReencryptBody), required: false } },
      responses: {
        200: jsonContent(AnyRecord, "How many values moved to the current key; repeat while `remaining`."),
      },
    }),
    async (c) => {
      const { limit } = c.req.valid("json");
      return c.json(await reencryptVariables(c.get("ctx"), limit ?? 100), 200);
    },
  );
}
