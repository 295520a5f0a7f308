/**
 * /internal/v1: the deployment engine's and the dashboard's API (bearer ADMIN_TOKEN, not
 * rate-limited, never published). Laid out like the public API: a folder per resource, a file
 * per operation, `registerInternalX` for the operation `internalX`.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerInternalCreateAccount } from "./accounts/create";
import { registerInternalRevokeApiKey } from "./api-keys/revoke";
import { registerInternalCreateComponent } from "./components/create";
import { registerInternalAppendDeploymentLogs } from "./deployments/append-logs";
import { registerInternalCreateDeployment } from "./deployments/create";
import { registerInternalListDeployments } from "./deployments/list";
import { registerInternalUpdateDeployment } from "./deployments/update";
import { registerInternalCreateEnvironment } from "./environments/create";
import { registerInternalCreateEvent } from "./events/create";
import { registerInternalCreateIntegration } from "./integrations/create";
import { registerInternalAddOrgMember } from "./orgs/add-member";
import { registerInternalCreateOrg } from "./orgs/create";
import { registerInternalCreateApiKey } from "./orgs/create-api-key";
import { registerInternalCreateResource } from "./resources/create";
import { registerInternalUpdateResource } from "./resources/update";
import { registerInternalCreateStack } from "./stacks/create";
import { registerInternalReencryptVariables } from "./variables/reencrypt";

export function registerInternalRoutes(app: OpenAPIHono<AppEnv>) {
  registerInternalCreateOrg(app);
  registerInternalCreateAccount(app);
  registerInternalAddOrgMember(app);
  registerInternalCreateApiKey(app);
  registerInternalRevokeApiKey(app);
  registerInternalCreateEnvironment(app);
  registerInternalCreateComponent(app);
  registerInternalCreateStack(app);
  registerInternalCreateResource(app);
  registerInternalUpdateResource(app);
  registerInternalCreateDeployment(app);
  registerInternalListDeployments(app);
  registerInternalUpdateDeployment(app);
  registerInternalAppendDeploymentLogs(app);
  registerInternalCreateEvent(app);
  registerInternalCreateIntegration(app);
  registerInternalReencryptVariables(app);
}
