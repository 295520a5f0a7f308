/** API_CONTRACT §18: one change of many variables of a component. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute } from "../../openapi/define-route";
import { applyVariableChanges } from "../../services/variables/sets";
import { ComponentParams } from "./schema";
import { applyChanges, registerChangeExamples } from "./set-writes";
import { COMPONENT_VARIABLES, componentOf } from "./sets";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    ...applyChanges,
    path: COMPONENT_VARIABLES,
    operationId: "applyComponentVariableChanges",
    lostAnswer: { rebuild: "none", why: "a change result describes that request alone" },
    request: { ...applyChanges.request, params: ComponentParams },
  });
  registerChangeExamples(app);
  app.openapi(route, async (c) => {
    const parent = componentOf(c.req.valid("param"));
    return c.json(await applyVariableChanges(callerContext(c), parent, c.req.valid("json")), 200);
  });
}
