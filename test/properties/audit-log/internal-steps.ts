/** The guard's steps for the internal API's operations (test/properties/audit-log/guard.test.ts), by action. */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { call, type Row, type Step, secrets, VALUE } from "../../helpers/audit-log";
import { createAccount, unique } from "../../helpers/factories";
import { randomKey } from "../../helpers/variables";

export const INTERNAL_STEPS: Record<string, Step> = {
  "internal.createOrg": async () => {
    const res = await call<{ id: string }>("POST", "/internal/v1/orgs", {
      admin: true,
      body: { name: unique("org") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "organization", targetId: res.body.id, orgId: res.body.id, changed: ["name"] },
    };
  },
  "internal.createAccount": async () => {
    const res = await call<{ id: string }>("POST", "/internal/v1/accounts", {
      admin: true,
      body: { name: unique("acc") },
    });
    // An account belongs to no organization: its entry has org_id null.
    return {
      res,
      actor: "admin",
      expect: { target: "account", targetId: res.body.id, orgId: null, changed: ["name"] },
    };
  },
  "internal.replaceOrgLimits": async (s) => {
    const res = await call("PUT", `/internal/v1/orgs/${s.org.id}/limits`, {
      admin: true,
      body: { projects: 150, variables: 20_000 },
    });
    // Only the limits that changed (`variables` is already 20,000).
    return {
      res,
      actor: "admin",
      expect: { target: "organization", targetId: s.org.id, orgId: s.org.id, changed: ["projects"] },
    };
  },
  "internal.addOrgMember": async (s) => {
    const account = await createAccount();
    const res = await call("POST", `/internal/v1/orgs/${s.org.id}/members`, {
      admin: true,
      body: { account_id: account.id, role: "member" },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "org_member", targetId: account.id, orgId: s.org.id, changed: ["role"] },
    };
  },
  "internal.createApiKey": async (s) => {
    const res = await call<{ id: string; key: string }>("POST", `/internal/v1/orgs/${s.org.id}/api-keys`, {
      admin: true,
      body: { account_id: s.owner.accountId, created_by: s.owner.accountId, scopes: ["projects:read"] },
    });
    s.keyId = res.body.id;
    secrets.push(res.body.key, res.body.key.slice(4));
    return {
      res,
      actor: "admin",
      expect: { target: "api_key", targetId: res.body.id, orgId: s.org.id, changed: ["scopes"] },
    };
  },
  "internal.revokeApiKey": async (s) => {
    const res = await call("DELETE", `/internal/v1/api-keys/${s.keyId}`, { admin: true });
    return {
      res,
      actor: "admin",
      expect: { target: "api_key", targetId: s.keyId, orgId: s.org.id, changed: ["revoked_at"] },
    };
  },
  "internal.createEnvironment": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/projects/${s.project.id}/environments`, {
      admin: true,
      body: { name: unique("env") },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "environment",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["name"],
      },
    };
  },
  "internal.createComponent": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/components`, {
      admin: true,
      body: { name: unique("comp") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "component", targetId: res.body.id, projectId: s.project.id, orgId: s.org.id },
    };
  },
  "internal.createStack": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/stacks`, {
      admin: true,
      body: { name: unique("stack") },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "stack", targetId: res.body.id, projectId: s.project.id, orgId: s.org.id },
    };
  },
  "internal.createResource": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/stacks/${s.stackId}/resources`, {
      admin: true,
      body: { resource_type: "bucket", physical_id: "b-1", status: "create_in_progress" },
    });
    s.resourceId = res.body.id;
    return {
      res,
      actor: "admin",
      expect: {
        target: "stack_resource",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.updateResource": async (s) => {
    const res = await call("PATCH", `/internal/v1/resources/${s.resourceId}`, {
      admin: true,
      body: { status: "create_complete" },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "stack_resource",
        targetId: s.resourceId,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.createDeployment": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/environments/${s.envId}/deployments`, {
      admin: true,
      body: { stack_ids: [s.stackId], data: { patch: [{ op: "add", path: "/x", value: VALUE() }] } },
    });
    s.deploymentId = res.body.id;
    return {
      res,
      actor: "admin",
      expect: {
        target: "deployment",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.updateDeployment": async (s) => {
    const res = await call("PATCH", `/internal/v1/deployments/${s.deploymentId}`, {
      admin: true,
      body: { status: "in_progress" },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "deployment",
        targetId: s.deploymentId,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["status"],
      },
    };
  },
  "internal.appendDeploymentLogs": async (s) => {
    // An engine's log line may hold anything: the entry names how far the timeline went, never a line.
    const res = await call("POST", `/internal/v1/deployments/${s.deploymentId}/logs`, {
      admin: true,
      body: { lines: [{ message: VALUE() }] },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "deployment",
        targetId: s.deploymentId,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["last_seq"],
      },
    };
  },
  "internal.createEvent": async (s) => {
    const res = await call<{ id: string }>("POST", `/internal/v1/projects/${s.project.id}/events`, {
      admin: true,
      body: { type: "changelog.created", data: { note: VALUE() } },
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "event",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["type"],
      },
    };
  },
  "internal.createIntegration": async (s) => {
    const slackUrl = `https://hooks.slack.com/services/T000/B000/${crypto.randomUUID().replace(/-/g, "")}`;
    secrets.push(slackUrl);
    const res = await call<{ id: string; signing_secret: string }>(
      "POST",
      `/internal/v1/projects/${s.project.id}/notification-integrations`,
      {
        admin: true,
        body: { type: "slack", url: slackUrl },
      },
    );
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: "admin",
      expect: {
        target: "notification_integration",
        targetId: res.body.id,
        projectId: s.project.id,
        orgId: s.org.id,
        changed: ["type"],
      },
    };
  },
  "internal.reencryptVariables": async (s) => {
    // A value under an old key, then the sweep with that key as the previous one.
    const oldKey = randomKey();
    const created = await call("POST", `/v1/environments/${s.envId}/variables`, {
      key: s.owner.key,
      body: { name: unique("OLD").replace(/-/g, "_"), type: "secret", value: VALUE() },
      bindings: { VARIABLES_KEY: oldKey },
    });
    expect(created.status).toBe(201);
    const res = await call<Row>("POST", "/internal/v1/variables/reencrypt", {
      admin: true,
      body: { limit: 500 },
      bindings: { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey },
    });
    return {
      res,
      actor: "admin",
      expect: { target: "variables_key", orgId: null, changed: ["key_version"] },
    };
  },
  // A move, cancelled by the next step at once (its rows, these entries among them, stay in DB).
  "internal.moveOrganization": async (s) => {
    const org = await call<{ id: string }>("POST", "/internal/v1/orgs", {
      admin: true,
      body: { name: unique("org") },
    });
    const res = await call<{ id: string }>("POST", `/internal/v1/orgs/${org.body.id}/moves`, {
      admin: true,
      body: { to: "DB_ORG_2" },
    });
    s.moveId = res.body.id;
    return {
      res,
      actor: "admin",
      expect: { target: "organization", targetId: org.body.id, orgId: org.body.id, changed: ["database"] },
    };
  },
  "internal.cancelMove": async (s) => {
    const res = await call<{ org_id: string }>("POST", `/internal/v1/moves/${s.moveId}/cancel`, {
      admin: true,
    });
    return {
      res,
      actor: "admin",
      expect: {
        target: "organization",
        targetId: res.body.org_id,
        orgId: res.body.org_id,
        changed: ["database"],
      },
    };
  },
};
