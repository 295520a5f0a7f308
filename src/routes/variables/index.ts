import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateComponentVariable } from "./create-component";
import { registerCreateEnvironmentVariable } from "./create-environment";
import { registerDeleteVariable } from "./delete";
import { registerGetVariable } from "./get";
import { registerListComponentVariables } from "./list-component";
import { registerListEnvironmentVariables } from "./list-environment";
import { registerReplaceVariable } from "./replace";
import { registerRevealVariable } from "./reveal";

export function registerVariableRoutes(app: OpenAPIHono<AppEnv>) {
  registerGetVariable(app);
  registerReplaceVariable(app);
  registerDeleteVariable(app);
  registerRevealVariable(app);
  registerListComponentVariables(app);
  registerCreateComponentVariable(app);
  registerListEnvironmentVariables(app);
  registerCreateEnvironmentVariable(app);
}
