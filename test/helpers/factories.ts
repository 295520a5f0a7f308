/**
 * Factories: every test makes its own organizations, accounts, keys and projects
 * through the real internal and public APIs. No shared seed IDs.
 */
import { env } from "cloudflare:test";
import type { OrgRole, ProjectRole } from "../../src/db/schema";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import type { CreatedIntegration } from "../../src/schemas/integration";
import type { ApiKeyRecord, NewApiKeyRecord } from "../../src/schemas/organization";
import type { StackResourceRecord } from "../../src/schemas/resource";
import { internalOk, request } from "./api";

let counter = 0;
export const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

export type Org = { id: string; name: string; created_at: string };
export type Account = { id: string; name: string; display_name: string };
export type Caller = { orgId: string; accountId: string; key: string; keyId: string; role: OrgRole };

export async function createOrg(name = unique("org")): Promise<Org> {
  return internalOk<Org>("POST", "/orgs", { name });
}

export async function createAccount(fields: Record<string, unknown> = {}): Promise<Account> {
  return internalOk<Account>("POST", "/accounts", { name: unique("user"), ...fields });
}

/** A key through the internal API: `account_id` in `orgId`, `created_by` an owner or admin of it. */
function issueKey(orgId: string, accountId: string, createdBy: string, fields: Record<string, unknown> = {}) {
  return internalOk<ApiKeyRecord>("POST", `/orgs/${orgId}/api-keys`, {
    account_id: accountId,
    created_by: createdBy,
    ...fields,
  });
}

/** An account in `org` with `role`, and an API key acting as it (issued by the org's owner). */
export async function createCaller(org: Org, role: OrgRole, issuer?: Caller): Promise<Caller> {
  const account = await createAccount();
  await internalOk("POST", `/orgs/${org.id}/members`, { account_id: account.id, role });
  const createdBy = role === "owner" || role === "admin" ? account.id : issuer?.accountId;
  if (!createdBy) throw new Error("a member's key needs an issuer (an owner or admin Caller)");
  const key = await issueKey(org.id, account.id, createdBy);
  return { orgId: org.id, accountId: account.id, key: key.key, keyId: key.id, role };
}

/**
 * Another API key of `caller`'s account (a rate-limit window and `last_used_at` of its own),
 * issued by `issuer` (default: the account itself, then an owner or admin), with any other field
 * of the internal create (`name`, `scopes`, `project_ids`, `expires_at`). Returns the caller
 * acting through the new key, with the key's record.
 */
export async function createApiKey(
  caller: Caller,
  fields: Record<string, unknown> = {},
  issuer: Caller = caller,
): Promise<Caller & { record: ApiKeyRecord }> {
  const record = await issueKey(caller.orgId, caller.accountId, issuer.accountId, fields);
  return { ...caller, key: record.key, keyId: record.id, record };
}

/**
 * A key made by `caller`'s key through `POST /v1/api-keys` (API_CONTRACT §21): it acts as the same
 * account, with `fields` (`scopes`, `project_ids`, `expires_at`, `name`) or the caller's own.
 * Returns the caller acting through the new key, with the key's record.
 */
export async function deriveKey(
  caller: Caller,
  fields: Record<string, unknown> = {},
): Promise<Caller & { record: NewApiKeyRecord }> {
  const res = await request<NewApiKeyRecord>("POST", "/v1/api-keys", { key: caller.key, body: fields });
  if (res.status !== 201) throw new Error(`derive key → ${res.status} ${res.raw}`);
  return { ...caller, key: res.body.key, keyId: res.body.id, record: res.body };
}

/** A fresh organization with its owner. */
export async function createOrgWithOwner(): Promise<{ org: Org; owner: Caller }> {
  const org = await createOrg();
  const owner = await createCaller(org, "owner");
  return { org, owner };
}

export type Project = {
  id: string;
  org_id: string;
  name: string;
  default_environment_id: string;
  connection_status: string;
  created_at: string;
};

export async function createProject(caller: Caller, fields: Record<string, unknown> = {}): Promise<Project> {
  const res = await request<Project>("POST", "/v1/projects", {
    key: caller.key,
    body: { name: unique("project"), ...fields },
  });
  if (res.status !== 201) throw new Error(`create project → ${res.status} ${res.raw}`);
  return res.body;
}

/** Makes `member` (an org member) a member of `project` with `role`, through the members API. */
export async function addProjectMember(owner: Caller, projectId: string, member: Caller, role: ProjectRole) {
  const res = await request("POST", `/v1/projects/${projectId}/members`, {
    key: owner.key,
    body: { account_ids: [member.accountId], role },
  });
  if (res.status !== 201) throw new Error(`add member → ${res.status} ${res.raw}`);
}

/** Three org members of `project`'s organization: its `viewer`, its `contributor`, and one outside it. */
export async function projectRoleCallers(w: { org: Org; owner: Caller; project: Project }) {
  const [viewer, contributor, outsider] = [
    await createCaller(w.org, "member", w.owner),
    await createCaller(w.org, "member", w.owner),
    await createCaller(w.org, "member", w.owner),
  ];
  await addProjectMember(w.owner, w.project.id, viewer, "viewer");
  await addProjectMember(w.owner, w.project.id, contributor, "contributor");
  return { viewer, contributor, outsider };
}

export async function createEnvironment(projectId: string, name = unique("env")) {
  return internalOk<{ id: string; project_id: string; name: string }>(
    "POST",
    `/projects/${projectId}/environments`,
    {
      name,
    },
  );
}

export async function createComponent(environmentId: string, name = unique("component")) {
  return internalOk<{ id: string; environment_id: string }>(
    "POST",
    `/environments/${environmentId}/components`,
    {
      name,
    },
  );
}

export async function createStack(environmentId: string, fields: Record<string, unknown> = {}) {
  return internalOk<{ id: string; environment_id: string; template_id: string }>(
    "POST",
    `/environments/${environmentId}/stacks`,
    { name: unique("stack"), ...fields },
  );
}

/** A stack resource as the engine reports it (internal API); `fields` override the defaults. */
export function createResource(stackId: string, fields: Record<string, unknown> = {}) {
  return internalOk<StackResourceRecord>("POST", `/stacks/${stackId}/resources`, {
    resource_type: "AWS::S3::Bucket",
    physical_id: unique("bucket"),
    status: "create_complete",
    ...fields,
  });
}

/** A JSON Patch that deployments carry by default. */
export const DEPLOYMENT_PATCH = [
  { op: "replace", path: "/services/api/image", value: "api:2", old_value: "api:1" },
];

/** A queued deployment of `stackIds` in an environment (internal API), carrying `data`. */
export function createDeployment(
  environmentId: string,
  stackIds: string[],
  data: Record<string, unknown> = { patch: DEPLOYMENT_PATCH },
) {
  return internalOk<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
    stack_ids: stackIds,
    data,
  });
}

/**
 * A notification integration of a project (internal API, which answers its signing secret and
 * full URL); by default a webhook to a host that is never called, with `changelog` on.
 */
export function createIntegration(projectId: string, fields: Record<string, unknown> = {}) {
  return internalOk<CreatedIntegration>("POST", `/projects/${projectId}/notification-integrations`, {
    type: "webhook",
    url: `https://hooks.example.com/${unique("hook")}`,
    configuration: { changelog: true },
    ...fields,
  });
}

export async function revokeKey(keyId: string) {
  await internalOk("DELETE", `/api-keys/${keyId}`);
}

/** A fresh organization, its owner, and a project of theirs. */
export async function createOwnedProject(): Promise<{ org: Org; owner: Caller; project: Project }> {
  const { org, owner } = await createOrgWithOwner();
  return { org, owner, project: await createProject(owner) };
}

/** A fresh organization, its owner, a project of theirs and a stack in its default environment. */
export async function createProjectWithStack() {
  const { org, owner, project } = await createOwnedProject();
  const environmentId = project.default_environment_id;
  const stack = await createStack(environmentId);
  return { org, owner, project, environmentId, stack };
}

/**
 * `count` stacks of an environment written straight to D1 in one statement (for tests that need
 * thousands); their IDs, in the 32-hex form, in order.
 */
export async function insertStacks(
  projectId: string,
  environmentId: string,
  count: number,
): Promise<string[]> {
  const prefix = crypto.randomUUID().replaceAll("-", "").slice(0, 24);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?4)
     INSERT INTO stacks (id, project_id, environment_id, name, template_id, created_at)
     SELECT ?1 || printf('%08x', i), ?2, ?3, 'bulk ' || i, 'tpl', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM n`,
  )
    .bind(prefix, projectId, environmentId, count)
    .run();
  return Array.from({ length: count }, (_, i) => `${prefix}${(i + 1).toString(16).padStart(8, "0")}`);
}

/**
 * The record of another key of `caller`'s account with `fields` (`scopes`, `project_ids`, …),
 * the key itself included.
 */
export async function scopedKey(caller: Caller, fields: Record<string, unknown>): Promise<ApiKeyRecord> {
  return (await createApiKey(caller, fields)).record;
}

/** A fresh organization, its owner, a project of theirs and that project's default environment. */
export async function createProjectEnvironment() {
  const { org, owner, project } = await createOwnedProject();
  return { org, owner, project, environmentId: project.default_environment_id };
}
