/** listStackDeployments: GET /v1/stacks/{stack_id}/deployments (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import { deploymentRoute, deploymentsInScopes, listIds } from "../../helpers/engine";
import { byCreated } from "../../helpers/pages";
import { runCommonRouteTests } from "../../helpers/security";

describe("GET /v1/stacks/{stack_id}/deployments", () => {
  it("scopes: a stack lists the deployments that include it", async () => {
    const { owner, stack, second, both, onlySecond } = await deploymentsInScopes();
    const list = listIds(owner.key);
    expect(await list(`/v1/stacks/${stack.id}/deployments`)).toEqual([both.id]);
    expect(await list(`/v1/stacks/${second.id}/deployments?sort_by=created_at`)).toEqual(
      [both, onlySecond].sort(byCreated).map((d) => d.id),
    );
  });

  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/deployments",
    deploymentRoute((s) => `/v1/stacks/${s.stack.id}/deployments`),
  );
});
