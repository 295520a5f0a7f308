/** The records the helpers and the CLI use, read off `Paths` so that generated shapes win. */
import type { paths as Paths } from "./schema.js";

type Json200<Op> = Op extends { responses: { 200: { content: { "application/json": infer T } } } }
  ? T
  : never;
type Json201<Op> = Op extends { responses: { 201: { content: { "application/json": infer T } } } }
  ? T
  : never;
type Item<L> = L extends { data: (infer T)[] } ? T : never;

export type Deployment = Json200<Paths["/v1/deployments/{id}/wait"]["get"]>;
export type DeploymentStatus = Deployment["status"];
export type TimelineEntry = Item<Json200<Paths["/v1/deployments/{id}/timeline"]["get"]>>;
export type VariableChangeResult = Json200<Paths["/v1/environments/{environment_id}/variables"]["patch"]>;
export type VariableChangeRequest = NonNullable<
  Paths["/v1/environments/{environment_id}/variables"]["patch"]["requestBody"]
>["content"]["application/json"];
export type VariableVersion = Json200<
  Paths["/v1/environments/{environment_id}/variables/versions/{version}"]["get"]
>;
export type ApiKeyRecord = Json200<Paths["/v1/api-keys/{id}"]["get"]>;
export type ApiKeyCreated = Json201<Paths["/v1/api-keys"]["post"]>;
export type ApiKeyCreate = NonNullable<
  Paths["/v1/api-keys"]["post"]["requestBody"]
>["content"]["application/json"];
export type Project = Item<Json200<Paths["/v1/projects"]["get"]>>;
export type CurrentKey = Json200<Paths["/v1/api-keys/current"]["get"]>;
export type Environment = Json200<Paths["/v1/environments/{environment_id}"]["get"]>;
export type EnvironmentProtection = Json200<Paths["/v1/environments/{environment_id}/protection"]["get"]>;
export type EnvironmentProtectionSettings = NonNullable<
  Paths["/v1/environments/{environment_id}/protection"]["put"]["requestBody"]
>["content"]["application/json"];
export type DeploymentCreate = NonNullable<
  Paths["/v1/environments/{environment_id}/deployments"]["post"]["requestBody"]
>["content"]["application/json"];
export type PromotionPlan = Json200<Paths["/v1/deployments/{id}/promote"]["post"]>;
export type DeploymentConfig = Json200<Paths["/v1/deployments/{id}/config"]["get"]>;
export type DeploymentConfigDiff = Json200<Paths["/v1/deployments/{id}/config/diff"]["get"]>;

/** The statuses a deployment never leaves. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(["succeeded", "failed", "cancelled"]);
export const isFinal = (status: string): boolean => FINAL_STATUSES.has(status);
export type OrgLimits = Json200<Paths["/v1/orgs/{org_id}/limits"]["get"]>;
export type AuditEntry = Item<Json200<Paths["/v1/orgs/{org_id}/audit-log"]["get"]>>;
export type AuditStream = Json200<Paths["/v1/audit-streams/{id}"]["get"]>;
export type AuditStreamCreate = NonNullable<
  Paths["/v1/orgs/{org_id}/audit-streams"]["post"]["requestBody"]
>["content"]["application/json"];
