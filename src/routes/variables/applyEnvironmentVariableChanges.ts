/** API_CONTRACT §18: one change of many variables of an environment. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { applyVariableChanges } from "../../services/variables/sets";
import { EnvironmentParams } from "./schema";
import { applyChanges, registerChangeExamples } from "./set-writes";
import { ENVIRONMENT_VARIABLES, environmentOf } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...applyChanges,
    path: ENVIRONMENT_VARIABLES,
    operationId: "applyEnvironmentVariableChanges",
    lostAnswer: { rebuild: "none", why: "a change result describes that request alone" },
    request: { ...applyChanges.request, params: EnvironmentParams },
  });
  registerChangeExamples(app);
  app.openapi(route, async (c) => {
    const parent = environmentOf(c.req.valid("param"));
    return c.json(await applyVariableChanges(callerContext(c), parent, c.req.valid("json")), 200);
  });
}
