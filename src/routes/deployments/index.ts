import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCancelDeployment } from "./cancel";
import { registerGetDeployment } from "./get";
import { registerGetEnvironmentDeployment } from "./get-environment";
import { registerListDeployments } from "./list";
import { registerListEnvironmentDeployments } from "./list-environment";
import { registerListStackDeployments } from "./list-stack";
import { registerRedeployDeployment } from "./redeploy";
import { registerGetDeploymentTimeline } from "./timeline";
import { registerWaitForDeployment } from "./wait";

export function registerDeploymentRoutes(app: OpenAPIHono<AppEnv>) {
  registerListDeployments(app);
  registerGetDeployment(app);
  registerGetEnvironmentDeployment(app);
  registerCancelDeployment(app);
  registerRedeployDeployment(app);
  registerListStackDeployments(app);
  registerListEnvironmentDeployments(app);
  registerGetDeploymentTimeline(app);
  registerWaitForDeployment(app);
}
