/** The guard's steps for the public operations (test/properties/audit-log/guard.test.ts), by operationId. */
import { internalOk, request } from "../../helpers/api";
import { call, type State, type Step, secrets, VALUE } from "../../helpers/audit-log";
import {
  createDeployment,
  createEnvironment,
  createProject,
  createStack,
  unique,
} from "../../helpers/factories";
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
  ...partFourSteps(),
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
  ...auditStreamSteps(),
};

/** API_CONTRACT §30: an audit stream, paused (its batches are not this guard's subject). */
function auditStreamSteps(): Record<string, Step> {
  const target = (s: State) => ({ target: "audit_stream", targetId: s.streamId, orgId: s.org.id });
  return {
    createAuditStream: async (s) => {
      const res = await call<{ id: string; signing_secret: string }>(
        "POST",
        `/v1/orgs/${s.org.id}/audit-streams`,
        {
          key: s.owner.key,
          body: { name: unique("siem"), url: "https://siem.example.com/in", enabled: false },
        },
      );
      s.streamId = res.body.id;
      secrets.push(res.body.signing_secret);
      return { res, actor: s.owner, expect: { ...target(s), changed: ["name", "url", "enabled"] } };
    },
    updateAuditStream: async (s) => {
      const res = await call("PATCH", `/v1/audit-streams/${s.streamId}`, {
        key: s.owner.key,
        body: { name: "renamed" },
      });
      return { res, actor: s.owner, expect: { ...target(s), changed: ["name"] } };
    },
    replayAuditStream: async (s) => {
      const res = await call("POST", `/v1/audit-streams/${s.streamId}/replay`, {
        key: s.owner.key,
        body: { from_sequence: 1 },
      });
      return { res, actor: s.owner, expect: { ...target(s), changed: ["delivered_through"] } };
    },
    deleteAuditStream: async (s) => {
      const res = await call("DELETE", `/v1/audit-streams/${s.streamId}`, { key: s.owner.key });
      return { res, actor: s.owner, expect: { ...target(s), changed: ["name", "url"] } };
    },
  };
}

/** §26's five settings, requiring one approval. */
const ONE_APPROVAL = {
  required_approvals: 1,
  reviewer_role: "owner",
  prevent_self_review: true,
  wait_timer: 0,
  concurrency: "parallel",
};

/** A setup request by the owner's key that must succeed (its own request id: no entry of the step's). */
async function ownerOk(s: State, method: string, path: string, body?: unknown) {
  const res = await request(method, path, { key: s.owner.key, body });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.raw}`);
}

/** A new environment of the scenario's project with one stack (internal API). */
async function environmentWithStack(s: State, templateId?: string) {
  const environmentId = (await createEnvironment(s.project.id)).id;
  const stack = await createStack(environmentId, templateId ? { template_id: templateId } : {});
  return { environmentId, stackId: stack.id };
}

/**
 * Part four (API_CONTRACT §23–§26): each step makes what it needs, so the steps run in any order.
 * The environment ones target `{type: "environment", id}`, the protection, lock and unlock
 * `{type: "environment_protection", id: environmentId}`, the deployment ones the deployment.
 */
function partFourSteps(): Record<string, Step> {
  return {
    createEnvironment: async (s) => {
      const res = await call<{ id: string }>("POST", `/v1/projects/${s.project.id}/environments`, {
        key: s.owner.key,
        body: { name: unique("audited-env") },
      });
      return {
        res,
        actor: s.owner,
        expect: { target: "environment", targetId: res.body.id, projectId: s.project.id, changed: ["name"] },
      };
    },
    updateEnvironment: async (s) => {
      const { id } = await createEnvironment(s.project.id);
      const res = await call("PATCH", `/v1/environments/${id}`, {
        key: s.owner.key,
        body: { name: unique("renamed-env") },
      });
      return {
        res,
        actor: s.owner,
        expect: { target: "environment", targetId: id, projectId: s.project.id, changed: ["name"] },
      };
    },
    deleteEnvironment: async (s) => {
      const { id } = await createEnvironment(s.project.id);
      const res = await call("DELETE", `/v1/environments/${id}`, { key: s.owner.key });
      return {
        res,
        actor: s.owner,
        expect: { target: "environment", targetId: id, projectId: s.project.id, changed: ["name"] },
      };
    },
    // The patch holds a secret: the entry must not.
    createDeployment: async (s) => {
      const { environmentId, stackId } = await environmentWithStack(s);
      const res = await call<{ id: string }>("POST", `/v1/environments/${environmentId}/deployments`, {
        key: s.owner.key,
        body: { stack_ids: [stackId], data: { patch: [{ op: "add", path: "/x", value: VALUE() }] } },
      });
      return {
        res,
        actor: s.owner,
        expect: { target: "deployment", targetId: res.body.id, projectId: s.project.id, changed: ["status"] },
      };
    },
    // A real promotion (a dry run writes no entry, §25): its target is the new deployment.
    promoteDeployment: async (s) => {
      const templateId = unique("audited-template");
      const source = await environmentWithStack(s, templateId);
      const target = await environmentWithStack(s, templateId);
      const original = await createDeployment(source.environmentId, [source.stackId], {
        patch: [{ op: "add", path: "/x", value: VALUE() }],
      });
      await internalOk("PATCH", `/deployments/${original.id}`, { status: "in_progress" });
      await internalOk("PATCH", `/deployments/${original.id}`, { status: "succeeded" });
      const res = await call<{ id: string }>("POST", `/v1/deployments/${original.id}/promote`, {
        key: s.owner.key,
        body: { environment_id: target.environmentId },
      });
      return {
        res,
        actor: s.owner,
        expect: {
          target: "deployment",
          targetId: res.body.id,
          projectId: s.project.id,
          changed: ["status", "promoted_from"],
        },
      };
    },
    replaceEnvironmentProtection: async (s) => {
      const { id } = await createEnvironment(s.project.id);
      const res = await call("PUT", `/v1/environments/${id}/protection`, {
        key: s.owner.key,
        body: ONE_APPROVAL,
      });
      return {
        res,
        actor: s.owner,
        expect: {
          target: "environment_protection",
          targetId: id,
          projectId: s.project.id,
          changed: ["required_approvals"],
        },
      };
    },
    lockEnvironment: async (s) => {
      const { id } = await createEnvironment(s.project.id);
      const res = await call("POST", `/v1/environments/${id}/lock`, {
        key: s.owner.key,
        body: { reason: "audited lock" },
      });
      return {
        res,
        actor: s.owner,
        expect: {
          target: "environment_protection",
          targetId: id,
          projectId: s.project.id,
          changed: ["locked"],
        },
      };
    },
    // Locked first: an unlock of an unlocked environment changes nothing (§14: no entry).
    unlockEnvironment: async (s) => {
      const { id } = await createEnvironment(s.project.id);
      await ownerOk(s, "POST", `/v1/environments/${id}/lock`, { reason: "to be lifted" });
      const res = await call("DELETE", `/v1/environments/${id}/lock`, { key: s.owner.key });
      return {
        res,
        actor: s.owner,
        expect: {
          target: "environment_protection",
          targetId: id,
          projectId: s.project.id,
          changed: ["locked"],
        },
      };
    },
    // A deployment waiting for one approval, made by the internal API (`created_by` null, so
    // `prevent_self_review` does not hold the owner back). §14 names no field for a review: the
    // entry's `changes` is not checked here.
    reviewDeployment: async (s) => {
      const { environmentId, stackId } = await environmentWithStack(s);
      await ownerOk(s, "PUT", `/v1/environments/${environmentId}/protection`, ONE_APPROVAL);
      const waiting = await createDeployment(environmentId, [stackId]);
      if (waiting.status !== "waiting")
        throw new Error(`reviewDeployment: the deployment is ${waiting.status}`);
      const res = await call("POST", `/v1/deployments/${waiting.id}/reviews`, {
        key: s.owner.key,
        body: { state: "approved", comment: "audited" },
      });
      return {
        res,
        actor: s.owner,
        expect: { target: "deployment", targetId: waiting.id, projectId: s.project.id },
      };
    },
    // §31: a deployment held by one check, which the owner concludes.
    concludeCheck: async (s) => {
      const { environmentId, stackId } = await environmentWithStack(s);
      await ownerOk(s, "PUT", `/v1/environments/${environmentId}/protection`, {
        ...ONE_APPROVAL,
        required_approvals: 0,
        checks: [{ name: "e2e", timeout: 3600, on_timeout: "fail" }],
      });
      const waiting = await createDeployment(environmentId, [stackId]);
      const res = await call("POST", `/v1/deployments/${waiting.id}/checks/e2e`, {
        key: s.owner.key,
        body: { conclusion: "passed" },
      });
      return {
        res,
        actor: s.owner,
        expect: {
          target: "deployment",
          targetId: waiting.id,
          projectId: s.project.id,
          changed: ["gate", "updated_at"],
        },
      };
    },
  };
}
