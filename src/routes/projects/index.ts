import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateProject } from "./create";
import { registerDeleteProject } from "./delete";
import { registerDisconnectProject } from "./disconnect";
import { registerGetProject } from "./get";
import { registerListProjects } from "./list";
import { registerListOrgProjects } from "./list-org";
import { registerReplaceProject } from "./replace";

export function registerProjectRoutes(app: OpenAPIHono<AppEnv>) {
  registerListProjects(app);
  registerCreateProject(app);
  registerGetProject(app);
  registerReplaceProject(app);
  registerDeleteProject(app);
  registerListOrgProjects(app);
  registerDisconnectProject(app);
}
