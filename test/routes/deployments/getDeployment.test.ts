/** getDeployment: GET /v1/deployments/{id} (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deploymentRoute } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createDeployment, createProjectWithStack, DEPLOYMENT_PATCH } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;

describe("GET /v1/deployments/{id}", () => {
  it("reads the record: top-level optionals null, optional keys of data omitted", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createDeployment(environmentId, [stack.id]);
    expect(created).toEqual({
      id: expect.any(String),
      environment_id: environmentId,
      stack_ids: [stack.id],
      status: "queued",
      data: {
        patch: DEPLOYMENT_PATCH,
        stacks: [{ id: stack.id, status: "queued", timestamp: created.created_at }],
      },
      started_at: null,
      finished_at: null,
      created_at: created.created_at,
      updated_at: created.created_at,
      redeploy_of: null,
      promoted_from: null,
      gate: null,
      // The engine's create (API_CONTRACT §24): no account made it; it pins its environment's versions.
      created_by: null,
      config: { environment_version: 0, components: [] },
    });
    const res = await request<Deployment>("GET", `/v1/deployments/${created.id}`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect("source" in res.body.data).toBe(false);
  });

  it("an unknown id, or a malformed one: 404 / 400", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    await createDeployment(environmentId, [stack.id]);
    const unknown = await request<ErrorBody>("GET", `/v1/deployments/${"b".repeat(32)}`, { key: owner.key });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/deployments/-", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  runCommonRouteTests(
    "GET /v1/deployments/{id}",
    deploymentRoute((_, d) => `/v1/deployments/${d.id}`),
  );
});
