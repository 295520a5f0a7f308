/** listStackResources: GET /v1/stacks/{stack_id}/resources (API_CONTRACT §9 StackResource). */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { request } from "../../helpers/api";
import { resourceRoute, resourcesInScopes } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createCaller, createProjectWithStack, createResource, createStack } from "../../helpers/factories";
import { byCreated } from "../../helpers/pages";
import { runCommonRouteTests } from "../../helpers/security";

type Resource = StackResourceRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

describe("GET /v1/stacks/{stack_id}/resources", () => {
  it("a stack lists its own resources", async () => {
    const { owner, environmentId, stack, a } = await resourcesInScopes();
    const byStack = await request<List<Resource>>("GET", `/v1/stacks/${stack.id}/resources`, {
      key: owner.key,
    });
    expect(byStack.body).toEqual({ data: [a], has_more: false });
    const empty = await request<List<Resource>>(
      "GET",
      `/v1/stacks/${(await createStack(environmentId)).id}/resources`,
      { key: owner.key },
    );
    expect(empty.body).toEqual({ data: [], has_more: false });
  });

  it("the default order is newest first; a cursor of another order, or garbage, is 400", async () => {
    const { owner, stack } = await createProjectWithStack();
    const made = [
      await createResource(stack.id),
      await createResource(stack.id),
      await createResource(stack.id),
    ];
    const first = await request<List<Resource>>("GET", `/v1/stacks/${stack.id}/resources?limit=2`, {
      key: owner.key,
    });
    expect(first.body.data.map((r) => r.id)).toEqual(
      [...made]
        .sort(byCreated)
        .reverse()
        .slice(0, 2)
        .map((r) => r.id),
    );
    const cursor = encodeURIComponent(first.body.next_page ?? "");
    const wrongOrder = await request<ErrorBody>(
      "GET",
      `/v1/stacks/${stack.id}/resources?sort_by=created_at&after=${cursor}`,
      { key: owner.key },
    );
    expect([wrongOrder.status, wrongOrder.body.code]).toEqual([400, "bad_input"]);
    const garbage = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources?after=bm9wZQ==`, {
      key: owner.key,
    });
    expect([garbage.status, garbage.body.code]).toEqual([400, "bad_input"]);
    for (const limit of ["0", "241", "x"]) {
      const res = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources?limit=${limit}`, {
        key: owner.key,
      });
      expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
    }
  });

  it("an org member outside the project gets 404", async () => {
    const { org, owner, stack } = await createProjectWithStack();
    const outsider = await createCaller(org, "member", owner);
    await createResource(stack.id);
    const list = await request<ErrorBody>("GET", `/v1/stacks/${stack.id}/resources`, { key: outsider.key });
    expect([list.status, list.body.code]).toEqual([404, "not_found"]);
  });

  runCommonRouteTests(
    "GET /v1/stacks/{stack_id}/resources",
    resourceRoute((s) => `/v1/stacks/${s.stack.id}/resources`),
  );
});
