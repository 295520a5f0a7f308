/** The guard's steps for the public operations (test/properties/audit-log/guard.test.ts), by operationId. */
import { internalOk } from "../../helpers/api";
import { call, type Step, secrets, VALUE } from "../../helpers/audit-log";
import { createProject, unique } from "../../helpers/factories";
import { claimsFor, newIssuer, signToken, trustBody } from "../../helpers/oidc";
import { hook, writeDelivery, writeEvent } from "../../helpers/webhooks";

export const PUBLIC_STEPS: Record<string, Step> = {
  createProject: async (s) => {
    const res = await call<{ id: string }>("POST", "/v1/projects", {
      key: s.owner.key,
      body: { name: unique("p") },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "project", targetId: res.body.id, projectId: res.body.id, changed: ["name"] },
    };
  },
  replaceProject: async (s) => {
    const res = await call("PUT", `/v1/projects/${s.project.id}`, {
      key: s.owner.key,
      body: {
        name: unique("renamed"),
        description: "d",
        default_environment_id: s.project.default_environment_id,
      },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: s.project.id,
        projectId: s.project.id,
        changed: ["name", "description"],
      },
    };
  },
  disconnectProject: async (s) => {
    const res = await call("PATCH", `/v1/projects/${s.spare.id}/disconnect`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: s.spare.id,
        projectId: s.spare.id,
        changed: ["connection_status"],
      },
    };
  },
  deleteProject: async (s) => {
    const doomed = await createProject(s.owner);
    const res = await call("DELETE", `/v1/projects/${doomed.id}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project",
        targetId: doomed.id,
        projectId: doomed.id,
        orgId: s.org.id,
        changed: ["name"],
      },
    };
  },
  createOrg: async (s) => {
    const res = await call<{ id: string }>("POST", "/v1/orgs", {
      key: s.owner.key,
      body: { name: unique("org") },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "organization", targetId: res.body.id, orgId: res.body.id, changed: ["name"] },
    };
  },
  addProjectMembers: async (s) => {
    const res = await call("POST", `/v1/projects/${s.project.id}/members`, {
      key: s.owner.key,
      body: { account_ids: [s.member.accountId], role: "viewer" },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "project", targetId: s.project.id, projectId: s.project.id, changed: ["members"] },
    };
  },
  replaceProjectMember: async (s) => {
    const res = await call("PUT", `/v1/projects/${s.project.id}/members/${s.member.accountId}`, {
      key: s.owner.key,
      body: { role: "contributor" },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project_member",
        targetId: s.member.accountId,
        projectId: s.project.id,
        changed: ["role"],
      },
    };
  },
  removeProjectMember: async (s) => {
    const res = await call("DELETE", `/v1/projects/${s.project.id}/members/${s.member.accountId}`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "project_member",
        targetId: s.member.accountId,
        projectId: s.project.id,
        changed: ["role"],
      },
    };
  },
  createIntegration: async (s) => {
    const res = await call<{ id: string; signing_secret: string }>(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations`,
      {
        key: s.owner.key,
        // The local receiver: the steps' events and the redelivery reach it, never a real host.
        body: { type: "webhook", url: hook(unique("audit")), configuration: { changelog: true } },
      },
    );
    s.integrationId = res.body.id;
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: res.body.id,
        projectId: s.project.id,
        changed: ["url", "configuration"],
      },
    };
  },
  updateIntegration: async (s) => {
    const res = await call(
      "PATCH",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}`,
      {
        key: s.owner.key,
        body: { configuration: { services_ok: true } },
      },
    );
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: s.integrationId,
        projectId: s.project.id,
        changed: ["configuration"],
      },
    };
  },
  testIntegration: async (s) => {
    const { id } = await internalOk<{ id: string }>(
      "POST",
      `/projects/${s.project.id}/notification-integrations`,
      { type: "webhook", url: hook(unique("audit-test")), configuration: {} },
    );
    const res = await call("POST", `/v1/projects/${s.project.id}/notification-integrations/${id}/test`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "notification_integration", targetId: id, projectId: s.project.id },
    };
  },
  redeliverDelivery: async (s) => {
    const event = await writeEvent(s.project.id, "changelog.created");
    const deliveryId = await writeDelivery(s.project.id, event.id, s.integrationId ?? "", {
      status: "failed",
    });
    const res = await call(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/deliveries/${deliveryId}/redeliver`,
      { key: s.owner.key },
    );
    return {
      res,
      actor: s.owner,
      expect: {
        target: "webhook_delivery",
        targetId: deliveryId,
        projectId: s.project.id,
        changed: ["status"],
      },
    };
  },
  recoverIntegration: async (s) => {
    const event = await writeEvent(s.project.id, "changelog.created");
    await writeDelivery(s.project.id, event.id, s.integrationId ?? "", { status: "skipped" });
    const res = await call(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/recover`,
      { key: s.owner.key, body: { since: new Date(Date.now() - 3600_000).toISOString() } },
    );
    return {
      res,
      actor: s.owner,
      expect: { target: "notification_integration", targetId: s.integrationId, projectId: s.project.id },
    };
  },
  rotateIntegrationSecret: async (s) => {
    const res = await call<{ signing_secret: string }>(
      "POST",
      `/v1/projects/${s.project.id}/notification-integrations/${s.integrationId}/rotate-secret`,
      { key: s.owner.key, body: { expire_previous_in: 60 } },
    );
    secrets.push(res.body.signing_secret);
    return {
      res,
      actor: s.owner,
      expect: {
        target: "notification_integration",
        targetId: s.integrationId,
        projectId: s.project.id,
        changed: ["updated_at"],
      },
    };
  },
  createEnvironmentVariable: async (s) => {
    const res = await call<{ id: string }>("POST", `/v1/environments/${s.envId}/variables`, {
      key: s.owner.key,
      body: { name: "AUDITED", type: "secret", value: VALUE() },
    });
    s.variableId = res.body.id;
    return {
      res,
      actor: s.owner,
      expect: {
        target: "variable",
        targetId: res.body.id,
        projectId: s.project.id,
        changed: ["name", "type"],
      },
    };
  },
  createComponentVariable: async (s) => {
    const res = await call<{ id: string }>("POST", `/v1/components/${s.componentId}/variables`, {
      key: s.owner.key,
      body: { name: "PLAIN", type: "string", value: VALUE() },
    });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: res.body.id, projectId: s.project.id, changed: ["name"] },
    };
  },
  replaceVariable: async (s) => {
    const res = await call("PUT", `/v1/variables/${s.variableId}`, {
      key: s.owner.key,
      body: { name: "AUDITED_2", type: "secure_string", value: VALUE() },
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "variable",
        targetId: s.variableId,
        projectId: s.project.id,
        changed: ["name", "type"],
      },
    };
  },
  revealVariable: async (s) => {
    const res = await call("GET", `/v1/variables/${s.variableId}/value`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: s.variableId, projectId: s.project.id },
    };
  },
  deleteVariable: async (s) => {
    const res = await call("DELETE", `/v1/variables/${s.variableId}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "variable", targetId: s.variableId, projectId: s.project.id, changed: ["name"] },
    };
  },
  // The deployment's patch holds a secret (internal-steps.ts): the new one's entry must not.
  redeployDeployment: async (s) => {
    const res = await call<{ id: string }>("POST", `/v1/deployments/${s.deploymentId}/redeploy`, {
      key: s.owner.key,
    });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "deployment",
        targetId: res.body.id,
        projectId: s.project.id,
        changed: ["status", "redeploy_of"],
      },
    };
  },
  createApiKey: async (s) => {
    const res = await call<{ id: string; key: string }>("POST", "/v1/api-keys", {
      key: s.owner.key,
      body: { name: unique("made"), scopes: ["projects:read"] },
    });
    s.madeKeyId = res.body.id;
    secrets.push(res.body.key, res.body.key.slice(4));
    return {
      res,
      actor: s.owner,
      expect: { target: "api_key", targetId: res.body.id, changed: ["scopes", "parent_id"] },
    };
  },
  revokeApiKey: async (s) => {
    const res = await call("DELETE", `/v1/api-keys/${s.madeKeyId}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "api_key", targetId: s.madeKeyId, changed: ["revoked_at"] },
    };
  },
  cancelDeployment: async (s) => {
    const res = await call("PATCH", `/v1/deployments/${s.deploymentId}/cancel`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: {
        target: "deployment",
        targetId: s.deploymentId,
        projectId: s.project.id,
        changed: ["status"],
      },
    };
  },
  createOidcTrust: async (s) => {
    const res = await call<{ id: string; issuer: string; audience: string }>("POST", "/v1/oidc-trusts", {
      key: s.owner.key,
      body: trustBody(newIssuer()),
    });
    s.trust = res.body;
    return {
      res,
      actor: s.owner,
      expect: { target: "oidc_trust", targetId: res.body.id, changed: ["issuer", "conditions"] },
    };
  },
  exchangeOidcToken: async (s) => {
    const trust = s.trust as NonNullable<typeof s.trust>;
    const token = await signToken(claimsFor(trust.issuer, trust.audience));
    secrets.push(token, token.split(".")[2] ?? token);
    const res = await call<{ id: string; key: string }>("POST", "/v1/oidc/token", {
      body: { trust_id: trust.id, token },
    });
    secrets.push(res.body.key, res.body.key.slice(4));
    return {
      res,
      // API_CONTRACT §27: the new key acts in the entry of its own creation.
      actor: { ...s.owner, key: res.body.key, keyId: res.body.id },
      expect: {
        target: "api_key",
        targetId: res.body.id,
        changed: ["sub", "repository", "ref", "run_id", "oidc"],
      },
    };
  },
  deleteOidcTrust: async (s) => {
    const res = await call("DELETE", `/v1/oidc-trusts/${s.trust?.id}`, { key: s.owner.key });
    return {
      res,
      actor: s.owner,
      expect: { target: "oidc_trust", targetId: s.trust?.id, changed: ["issuer"] },
    };
  },
};
