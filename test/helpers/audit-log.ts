/**
 * The audit log's tests (test/properties/audit-log/, test/routes/audit-log/; API_CONTRACT §14): requests that carry their own
 * x-request-id and user agent, and the entries a request wrote.
 */
import { env } from "cloudflare:test";
import { type ApiResponse, request } from "./api";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createOrgWithOwner,
  createProject,
  type Org,
  type Project,
} from "./factories";

export type Row = Record<string, unknown>;

export const UA = "audit-test/1.0";
let requestCounter = 0;
export const newRequestId = () => `audit-${Date.now().toString(36)}-${(requestCounter++).toString(36)}`;

/** The audit entries one request wrote. */
export async function rowsOf(requestId: string): Promise<Row[]> {
  const { results } = await env.DB.prepare("SELECT * FROM audit_log WHERE request_id = ?")
    .bind(requestId)
    .all<Row>();
  return results;
}

/** A request with its own x-request-id and user agent (and bindings of its own, when given). */
export async function call<T = Row>(
  method: string,
  path: string,
  opts: {
    key?: string;
    admin?: boolean;
    body?: unknown;
    ip?: string;
    bindings?: Partial<Env> & Record<string, unknown>;
  } = {},
): Promise<ApiResponse<T> & { requestId: string }> {
  const requestId = newRequestId();
  const headers: Record<string, string> = { "x-request-id": requestId, "user-agent": UA };
  if (opts.admin) headers.authorization = `Bearer ${env.ADMIN_TOKEN}`;
  if (opts.ip) headers["cf-connecting-ip"] = opts.ip;
  const res = await request<T>(method, path, {
    key: opts.key ?? null,
    body: opts.body,
    headers,
    bindings: opts.bindings,
  });
  return { ...res, requestId };
}

export type Expectation = {
  target: string;
  /** The target's id, when the step knows it. */
  targetId?: string;
  projectId?: string | null;
  orgId?: string | null;
  /** Fields `changes` must hold. */
  changed?: string[];
};
export type StepResult = {
  res: { status: number; raw: string; requestId: string };
  expect: Expectation;
  actor: Caller | "admin";
};

/** Everything the scenario creates, shared by its steps (they run in order). */
export type State = {
  org: Org;
  owner: Caller;
  member: Caller;
  project: Project;
  spare: Project;
  envId: string;
  componentId: string;
  stackId: string;
  variableId?: string;
  integrationId?: string;
  /** The move internal.moveOrganization starts and internal.cancelMove cancels. */
  moveId?: string;
  resourceId?: string;
  deploymentId?: string;
  keyId?: string;
  /** A key made by a key (`createApiKey`), for `revokeApiKey`. */
  madeKeyId?: string;
  /** An OpenID Connect trust (`createOidcTrust`), for `exchangeOidcToken` and `deleteOidcTrust`. */
  trust?: { id: string; issuer: string; audience: string };
  /** An audit stream (`createAuditStream`), for its update, replay and delete. */
  streamId?: string;
};

export const secrets: string[] = [];
export const VALUE = () => {
  const value = `s3cr3t-${crypto.randomUUID()}`;
  secrets.push(value);
  return value;
};

/** One step of the guard's scenario: runs one state-changing operation and says what it should write. */
export type Step = (s: State) => Promise<StepResult>;

/** An audit entry as the two audit-log lists answer it. */
export type AuditEntry = {
  id: string;
  sequence: number;
  org_id: string | null;
  project_id: string | null;
  action: string;
  target: { type: string; id: string };
  actor: { type: string; account_id: string | null; api_key_id: string | null };
  request_id: string;
  changes: Record<string, { from: unknown; to: unknown }> | null;
  created_at: string;
};
export type AuditList = { data: AuditEntry[]; has_more: boolean; next_page?: string };

/**
 * An organization whose log holds a known history: its owner and an admin each create a project
 * (a and b), a member becomes a contributor of a and creates and reveals a variable there.
 */
export async function auditWorld() {
  const { org, owner } = await createOrgWithOwner();
  const admin = await createCaller(org, "admin");
  const member = await createCaller(org, "member", owner);
  const a = await createProject(owner);
  const b = await createProject(admin);
  await addProjectMember(owner, a.id, member, "contributor");
  const variable = await request<{ id: string }>(
    "POST",
    `/v1/environments/${a.default_environment_id}/variables`,
    {
      key: member.key,
      body: { name: "V", type: "string", value: "x" },
    },
  );
  await request("GET", `/v1/variables/${variable.body.id}/value`, { key: member.key });
  return { org, owner, admin, member, a, b };
}
