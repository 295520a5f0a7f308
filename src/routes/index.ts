/**
 * Every operation of the API, public (/v1) and internal (/internal/v1), by method and path, in the
 * order they are matched (`/v1/api-keys/current` before `/v1/api-keys/{id}`). Each is one module,
 * loaded on the operation's first request (src/http/operations.ts): a new isolate builds no route
 * it does not serve. A module declares its own route (`defineRoute` / `defineInternalRoute`);
 * test/properties/operations.test.ts holds each entry to the module it loads.
 */
import { type Operation, op } from "../http/operations";

export const OPERATIONS: readonly Operation[] = [
  // orgs
  op("get", "/v1/orgs", () => import("./orgs/list").then((m) => m.registerListOrgs)),
  op("post", "/v1/orgs", () => import("./orgs/create").then((m) => m.registerCreateOrg)),
  // projects
  op("get", "/v1/projects", () => import("./projects/list").then((m) => m.registerListProjects)),
  op("post", "/v1/projects", () => import("./projects/create").then((m) => m.registerCreateProject)),
  op("get", "/v1/projects/{project_id}", () => import("./projects/get").then((m) => m.registerGetProject)),
  op("put", "/v1/projects/{project_id}", () =>
    import("./projects/replace").then((m) => m.registerReplaceProject),
  ),
  op("delete", "/v1/projects/{project_id}", () =>
    import("./projects/delete").then((m) => m.registerDeleteProject),
  ),
  op("get", "/v1/orgs/{org_id}/projects", () =>
    import("./projects/list-org").then((m) => m.registerListOrgProjects),
  ),
  op("patch", "/v1/projects/{project_id}/disconnect", () =>
    import("./projects/disconnect").then((m) => m.registerDisconnectProject),
  ),
  // members
  op("get", "/v1/projects/{project_id}/members", () =>
    import("./members/list").then((m) => m.registerListProjectMembers),
  ),
  op("post", "/v1/projects/{project_id}/members", () =>
    import("./members/add").then((m) => m.registerAddProjectMembers),
  ),
  op("get", "/v1/projects/{project_id}/members/{member_id}", () =>
    import("./members/get").then((m) => m.registerGetProjectMember),
  ),
  op("put", "/v1/projects/{project_id}/members/{member_id}", () =>
    import("./members/replace").then((m) => m.registerReplaceProjectMember),
  ),
  op("delete", "/v1/projects/{project_id}/members/{member_id}", () =>
    import("./members/remove").then((m) => m.registerRemoveProjectMember),
  ),
  // integrations
  op("get", "/v1/projects/{project_id}/notification-integrations", () =>
    import("./integrations/list").then((m) => m.registerListIntegrations),
  ),
  op("post", "/v1/projects/{project_id}/notification-integrations", () =>
    import("./integrations/create").then((m) => m.registerCreateIntegration),
  ),
  op("get", "/v1/projects/{project_id}/notification-integrations/{integration_id}", () =>
    import("./integrations/get").then((m) => m.registerGetIntegration),
  ),
  op("patch", "/v1/projects/{project_id}/notification-integrations/{integration_id}", () =>
    import("./integrations/update").then((m) => m.registerUpdateIntegration),
  ),
  op("get", "/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries", () =>
    import("./integrations/list-deliveries").then((m) => m.registerListIntegrationDeliveries),
  ),
  op("post", "/v1/projects/{project_id}/notification-integrations/{integration_id}/test", () =>
    import("./integrations/test").then((m) => m.registerTestIntegration),
  ),
  op(
    "post",
    "/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries/{delivery_id}/redeliver",
    () => import("./integrations/redeliver").then((m) => m.registerRedeliverDelivery),
  ),
  op("post", "/v1/projects/{project_id}/notification-integrations/{integration_id}/recover", () =>
    import("./integrations/recover").then((m) => m.registerRecoverIntegration),
  ),
  op("post", "/v1/projects/{project_id}/notification-integrations/{integration_id}/rotate-secret", () =>
    import("./integrations/rotate-secret").then((m) => m.registerRotateIntegrationSecret),
  ),
  // events
  op("get", "/v1/projects/{project_id}/events", () =>
    import("./events/list").then((m) => m.registerListProjectEvents),
  ),
  op("get", "/v1/events/{event_id}", () => import("./events/get").then((m) => m.registerGetEvent)),
  op("get", "/v1/events/{event_id}/deliveries", () =>
    import("./events/list-deliveries").then((m) => m.registerListEventDeliveries),
  ),
  // variables
  op("get", "/v1/variables/{variable_id}", () =>
    import("./variables/get").then((m) => m.registerGetVariable),
  ),
  op("put", "/v1/variables/{variable_id}", () =>
    import("./variables/replace").then((m) => m.registerReplaceVariable),
  ),
  op("delete", "/v1/variables/{variable_id}", () =>
    import("./variables/delete").then((m) => m.registerDeleteVariable),
  ),
  op("get", "/v1/variables/{variable_id}/value", () =>
    import("./variables/reveal").then((m) => m.registerRevealVariable),
  ),
  op("get", "/v1/components/{component_id}/variables", () =>
    import("./variables/list-component").then((m) => m.registerListComponentVariables),
  ),
  op("post", "/v1/components/{component_id}/variables", () =>
    import("./variables/create-component").then((m) => m.registerCreateComponentVariable),
  ),
  op("get", "/v1/environments/{environment_id}/variables", () =>
    import("./variables/list-environment").then((m) => m.registerListEnvironmentVariables),
  ),
  op("post", "/v1/environments/{environment_id}/variables", () =>
    import("./variables/create-environment").then((m) => m.registerCreateEnvironmentVariable),
  ),
  op("patch", "/v1/environments/{environment_id}/variables", () =>
    import("./variables/apply-changes-environment").then((m) => m.registerApplyEnvironmentVariableChanges),
  ),
  op("get", "/v1/environments/{environment_id}/variables/versions", () =>
    import("./variables/list-versions-environment").then((m) => m.registerListEnvironmentVariableVersions),
  ),
  op("get", "/v1/environments/{environment_id}/variables/versions/{version}", () =>
    import("./variables/get-version-environment").then((m) => m.registerGetEnvironmentVariableVersion),
  ),
  op("post", "/v1/environments/{environment_id}/variables/versions/{version}/restore", () =>
    import("./variables/restore-version-environment").then(
      (m) => m.registerRestoreEnvironmentVariableVersion,
    ),
  ),
  op("get", "/v1/environments/{environment_id}/variables/export", () =>
    import("./variables/export-environment").then((m) => m.registerExportEnvironmentVariables),
  ),
  op("patch", "/v1/components/{component_id}/variables", () =>
    import("./variables/apply-changes-component").then((m) => m.registerApplyComponentVariableChanges),
  ),
  op("get", "/v1/components/{component_id}/variables/versions", () =>
    import("./variables/list-versions-component").then((m) => m.registerListComponentVariableVersions),
  ),
  op("get", "/v1/components/{component_id}/variables/versions/{version}", () =>
    import("./variables/get-version-component").then((m) => m.registerGetComponentVariableVersion),
  ),
  op("post", "/v1/components/{component_id}/variables/versions/{version}/restore", () =>
    import("./variables/restore-version-component").then((m) => m.registerRestoreComponentVariableVersion),
  ),
  op("get", "/v1/components/{component_id}/variables/export", () =>
    import("./variables/export-component").then((m) => m.registerExportComponentVariables),
  ),
  // resources
  op("get", "/v1/resources/{id}", () => import("./resources/get").then((m) => m.registerGetResource)),
  op("get", "/v1/stacks/{stack_id}/resources/{id}", () =>
    import("./resources/get-stack").then((m) => m.registerGetStackResource),
  ),
  op("get", "/v1/environments/{environment_id}/resources/{id}", () =>
    import("./resources/get-environment").then((m) => m.registerGetEnvironmentResource),
  ),
  op("get", "/v1/stacks/{stack_id}/resources", () =>
    import("./resources/list-stack").then((m) => m.registerListStackResources),
  ),
  op("get", "/v1/environments/{environment_id}/resources", () =>
    import("./resources/list-environment").then((m) => m.registerListEnvironmentResources),
  ),
  // deployments
  op("get", "/v1/deployments", () => import("./deployments/list").then((m) => m.registerListDeployments)),
  op("get", "/v1/deployments/{id}", () => import("./deployments/get").then((m) => m.registerGetDeployment)),
  op("get", "/v1/environments/{environment_id}/deployments/{id}", () =>
    import("./deployments/get-environment").then((m) => m.registerGetEnvironmentDeployment),
  ),
  op("patch", "/v1/deployments/{id}/cancel", () =>
    import("./deployments/cancel").then((m) => m.registerCancelDeployment),
  ),
  op("post", "/v1/deployments/{id}/redeploy", () =>
    import("./deployments/redeploy").then((m) => m.registerRedeployDeployment),
  ),
  op("get", "/v1/stacks/{stack_id}/deployments", () =>
    import("./deployments/list-stack").then((m) => m.registerListStackDeployments),
  ),
  op("get", "/v1/environments/{environment_id}/deployments", () =>
    import("./deployments/list-environment").then((m) => m.registerListEnvironmentDeployments),
  ),
  op("get", "/v1/deployments/{id}/timeline", () =>
    import("./deployments/timeline").then((m) => m.registerGetDeploymentTimeline),
  ),
  op("get", "/v1/deployments/{id}/wait", () =>
    import("./deployments/wait").then((m) => m.registerWaitForDeployment),
  ),
  // api-keys
  op("get", "/v1/api-keys/current", () =>
    import("./api-keys/current").then((m) => m.registerGetCurrentApiKey),
  ),
  op("get", "/v1/api-keys", () => import("./api-keys/list").then((m) => m.registerListApiKeys)),
  op("post", "/v1/api-keys", () => import("./api-keys/create").then((m) => m.registerCreateApiKey)),
  op("get", "/v1/api-keys/{id}", () => import("./api-keys/get").then((m) => m.registerGetApiKey)),
  op("delete", "/v1/api-keys/{id}", () => import("./api-keys/revoke").then((m) => m.registerRevokeApiKey)),
  // audit-log
  op("get", "/v1/orgs/{org_id}/audit-log", () =>
    import("./audit-log/list-org").then((m) => m.registerListOrgAuditLog),
  ),
  op("get", "/v1/projects/{project_id}/audit-log", () =>
    import("./audit-log/list-project").then((m) => m.registerListProjectAuditLog),
  ),
  // internal
  op("post", "/internal/v1/orgs", () =>
    import("./internal/orgs/create").then((m) => m.registerInternalCreateOrg),
  ),
  op("post", "/internal/v1/accounts", () =>
    import("./internal/accounts/create").then((m) => m.registerInternalCreateAccount),
  ),
  op("post", "/internal/v1/orgs/{org_id}/members", () =>
    import("./internal/orgs/add-member").then((m) => m.registerInternalAddOrgMember),
  ),
  op("post", "/internal/v1/orgs/{org_id}/api-keys", () =>
    import("./internal/orgs/create-api-key").then((m) => m.registerInternalCreateApiKey),
  ),
  op("delete", "/internal/v1/api-keys/{id}", () =>
    import("./internal/api-keys/revoke").then((m) => m.registerInternalRevokeApiKey),
  ),
  op("post", "/internal/v1/projects/{project_id}/environments", () =>
    import("./internal/environments/create").then((m) => m.registerInternalCreateEnvironment),
  ),
  op("post", "/internal/v1/environments/{environment_id}/components", () =>
    import("./internal/components/create").then((m) => m.registerInternalCreateComponent),
  ),
  op("post", "/internal/v1/environments/{environment_id}/stacks", () =>
    import("./internal/stacks/create").then((m) => m.registerInternalCreateStack),
  ),
  op("post", "/internal/v1/stacks/{stack_id}/resources", () =>
    import("./internal/resources/create").then((m) => m.registerInternalCreateResource),
  ),
  op("patch", "/internal/v1/resources/{id}", () =>
    import("./internal/resources/update").then((m) => m.registerInternalUpdateResource),
  ),
  op("post", "/internal/v1/environments/{environment_id}/deployments", () =>
    import("./internal/deployments/create").then((m) => m.registerInternalCreateDeployment),
  ),
  op("get", "/internal/v1/deployments", () =>
    import("./internal/deployments/list").then((m) => m.registerInternalListDeployments),
  ),
  op("patch", "/internal/v1/deployments/{id}", () =>
    import("./internal/deployments/update").then((m) => m.registerInternalUpdateDeployment),
  ),
  op("post", "/internal/v1/deployments/{id}/logs", () =>
    import("./internal/deployments/append-logs").then((m) => m.registerInternalAppendDeploymentLogs),
  ),
  op("post", "/internal/v1/projects/{project_id}/events", () =>
    import("./internal/events/create").then((m) => m.registerInternalCreateEvent),
  ),
  op("post", "/internal/v1/projects/{project_id}/notification-integrations", () =>
    import("./internal/integrations/create").then((m) => m.registerInternalCreateIntegration),
  ),
  op("post", "/internal/v1/variables/reencrypt", () =>
    import("./internal/variables/reencrypt").then((m) => m.registerInternalReencryptVariables),
  ),
];
