/** getEnvironmentDeployment: GET /v1/environments/{environment_id}/deployments/{id} (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deploymentRoute } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createDeployment, createEnvironment, createProjectWithStack } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;

describe("GET /v1/environments/{environment_id}/deployments/{id}", () => {
  it("reads the record as GET /v1/deployments/{id} does: optional keys of data omitted", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const created = await createDeployment(environmentId, [stack.id]);
    const res = await request<Deployment>(
      "GET",
      `/v1/environments/${environmentId}/deployments/${created.id}`,
      {
        key: owner.key,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
    expect("source" in res.body.data).toBe(false);
  });

  it("another environment's path: 404", async () => {
    const { owner, project, environmentId, stack } = await createProjectWithStack();
    const d = await createDeployment(environmentId, [stack.id]);
    const other = await createEnvironment(project.id);
    const wrong = await request<ErrorBody>("GET", `/v1/environments/${other.id}/deployments/${d.id}`, {
      key: owner.key,
    });
    expect([wrong.status, wrong.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests(
    "GET /v1/environments/{environment_id}/deployments/{id}",
    deploymentRoute((s, d) => `/v1/environments/${s.environmentId}/deployments/${d.id}`),
  );
});
