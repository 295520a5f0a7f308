import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerAddProjectMembers } from "./add";
import { registerGetProjectMember } from "./get";
import { registerListProjectMembers } from "./list";
import { registerRemoveProjectMember } from "./remove";
import { registerReplaceProjectMember } from "./replace";

export function registerMemberRoutes(app: OpenAPIHono<AppEnv>) {
  registerListProjectMembers(app);
  registerAddProjectMembers(app);
  registerGetProjectMember(app);
  registerReplaceProjectMember(app);
  registerRemoveProjectMember(app);
}
