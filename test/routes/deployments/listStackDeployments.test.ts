/** listStackDeployments: GET /v1/stacks/{stack_id}/deployments (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { deploymentRoute, deploymentsInScopes, listIds } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createProjectWithStack } from "../../helpers/factories";
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

  it("an unknown stack is 404; a malformed stack id is 400 naming it", async () => {
    const { owner } = await createProjectWithStack();
    const unknown = await request<ErrorBody>("GET", `/v1/stacks/${"c".repeat(32)}/deployments`, {
      key: owner.key,
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    const bad = await request<ErrorBody>("GET", "/v1/stacks/nope!/deployments", { key: owner.key });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    expect(bad.body.cause?.map((c) => c.path)).toContain("stack_id");
  });

  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/deployments",
    deploymentRoute((s) => `/v1/stacks/${s.stack.id}/deployments`),
  );
});
