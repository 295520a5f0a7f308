/** listEnvironmentVariables: GET /v1/environments/{environment_id}/variables. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { projectRoleCallers } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import {
  createVariable,
  environmentPath,
  type ListBody,
  setup,
  variablesInScopes,
} from "../../helpers/variables";

describe("GET /v1/environments/{id}/variables", () => {
  it("an environment lists only its own variables, not its components'", async () => {
    const { owner, environmentId, envVar } = await variablesInScopes();
    const byEnv = await request<ListBody>("GET", environmentPath(environmentId), { key: owner.key });
    expect(byEnv.status).toBe(200);
    expect(byEnv.body).toEqual({ data: [envVar], has_more: false });
  });

  it("the default order is -created_at and the default limit 20; bad query values are 400", async () => {
    const { owner, environmentId } = await setup();
    const a = await createVariable(owner, environmentPath(environmentId), { name: "A" });
    const b = await createVariable(owner, environmentPath(environmentId), { name: "B" });
    const res = await request<ListBody>("GET", environmentPath(environmentId), { key: owner.key });
    const expected = [a, b].sort((x, y) => (x.created_at + x.id < y.created_at + y.id ? 1 : -1));
    expect(res.body.data.map((v) => v.id)).toEqual(expected.map((v) => v.id));
    for (const query of ["limit=0", "limit=241", "sort_by=name", "after=%%%", "after=bm90IGEgY3Vyc29y"]) {
      const bad = await request<ErrorBody>("GET", `${environmentPath(environmentId)}?${query}`, {
        key: owner.key,
      });
      expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
    }
    const page = await request<ListBody>("GET", `${environmentPath(environmentId)}?limit=1`, {
      key: owner.key,
    });
    const otherOrder = await request<ErrorBody>(
      "GET",
      `${environmentPath(environmentId)}?limit=1&sort_by=created_at&after=${encodeURIComponent(page.body.next_page ?? "")}`,
      { key: owner.key },
    );
    expect([otherOrder.status, otherOrder.body.code]).toEqual([400, "bad_input"]);
  });

  it("an unknown or invisible environment is 404", async () => {
    const world = await setup();
    const res = await request<ErrorBody>("GET", environmentPath("a".repeat(32)), { key: world.owner.key });
    expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    // A real one, to a member of its organization who is not in its project: hidden, the same 404.
    const { outsider } = await projectRoleCallers(world);
    const hidden = await request<ErrorBody>("GET", environmentPath(world.environmentId), {
      key: outsider.key,
    });
    expect([hidden.status, hidden.body.code], hidden.raw).toEqual([404, "not_found"]);
    expect(
      (await request("GET", environmentPath(world.environmentId), { key: world.owner.key })).status,
    ).toBe(200);
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables", async () => {
    const { owner, environmentId } = await setup();
    return { method: "GET", path: environmentPath(environmentId), caller: owner };
  });
});
