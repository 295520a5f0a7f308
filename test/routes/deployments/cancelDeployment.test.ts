/** cancelDeployment: PATCH /v1/deployments/{id}/cancel (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deployIn, reportOk } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import {
  createDeployment,
  createProjectWithStack,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;

describe("PATCH /v1/deployments/{id}/cancel", () => {
  it("cancels a queued deployment: finished_at set, started_at null, stacks cancelled", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const d = await createDeployment(environmentId, [stack.id, second.id]);
    const res = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("cancelled");
    expect(res.body.started_at).toBeNull();
    expect(res.body.finished_at).toBe(res.body.updated_at);
    expect(res.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled", "cancelled"]);
    expect(res.body.data.stacks?.[0]?.timestamp).toBe(res.body.finished_at);
    const read = await request<Deployment>("GET", `/v1/deployments/${d.id}`, { key: owner.key });
    expect(read.body).toEqual(res.body);
  });

  it("cancels a running deployment, leaving finished stacks as they are", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const second = await createStack(environmentId);
    const d = await createDeployment(environmentId, [stack.id, second.id]);
    await reportOk(d.id, { status: "in_progress", stacks: [{ id: stack.id, status: "in_progress" }] });
    const partly = await reportOk(d.id, {
      status: "in_progress",
      stacks: [{ id: stack.id, status: "succeeded", status_reason: "done" }],
    });
    const res = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: owner.key,
    });
    expect(res.status).toBe(200);
    expect(res.body.started_at).toBe(partly.started_at);
    expect(res.body.data.stacks).toEqual([
      partly.data.stacks?.[0],
      { id: second.id, status: "cancelled", timestamp: res.body.finished_at },
    ]);
  });

  it.each(["succeeded", "failed", "cancelled"])(
    "a %s deployment is 409 conflict and unchanged",
    async (status) => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const d = await deployIn(environmentId, [stack.id], status);
      const res = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([409, "conflict"]);
      expect((await request("GET", `/v1/deployments/${d.id}`, { key: owner.key })).body).toEqual(d);
    },
  );

  it("two cancels at once: exactly one 200, the other 409", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    for (let round = 0; round < 3; round++) {
      const d = await createDeployment(environmentId, [stack.id]);
      const results = await Promise.all([
        request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
        request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    }
  });

  it("contributors cancel; viewers are 403 forbidden; outsiders 404", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const { viewer, contributor, outsider } = await projectRoleCallers({ org, owner, project });
    const d = await createDeployment(environmentId, [stack.id]);
    const denied = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: viewer.key,
    });
    expect([denied.status, denied.body.code]).toEqual([403, "forbidden"]);
    const hidden = await request<ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: outsider.key,
    });
    expect([hidden.status, hidden.body.code]).toEqual([404, "not_found"]);
    expect((await request("GET", `/v1/deployments/${d.id}`, { key: viewer.key })).status).toBe(200);
    const ok = await request<Deployment>("PATCH", `/v1/deployments/${d.id}/cancel`, {
      key: contributor.key,
    });
    expect([ok.status, ok.body.status]).toEqual([200, "cancelled"]);
  });
  runCommonRouteTests("PATCH /v1/deployments/{id}/cancel", async () => {
    const s = await createProjectWithStack();
    const d = await createDeployment(s.environmentId, [s.stack.id]);
    return { method: "PATCH", path: `/v1/deployments/${d.id}/cancel`, caller: s.owner };
  });
});
