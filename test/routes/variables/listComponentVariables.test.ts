/** listComponentVariables and listEnvironmentVariables. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { runCommonRouteTests } from "../../helpers/security";
import {
  componentPath,
  createVariable,
  environmentPath,
  type ListBody,
  setup,
  type VariableBody,
} from "../../helpers/variables";

describe("lists", () => {
  it("an environment lists only its own variables; a component only its own", async () => {
    const { owner, environmentId, componentId } = await setup();
    const envVar = await createVariable(owner, environmentPath(environmentId), { name: "ENV_ONLY" });
    const compVar = await createVariable(owner, componentPath(componentId), { name: "COMP_ONLY" });
    const byEnv = await request<ListBody>("GET", environmentPath(environmentId), { key: owner.key });
    expect(byEnv.status).toBe(200);
    expect(byEnv.body).toEqual({ data: [envVar], has_more: false });
    const byComp = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
    expect(byComp.body).toEqual({ data: [compVar], has_more: false });
  });

  it.each([
    ["component", "created_at"],
    ["component", "+created_at"],
    ["component", "-created_at"],
    ["environment", "-created_at"],
    ["environment", "created_at"],
  ] as const)("pages through a %s's variables once each, in order, sort_by=%s", async (parent, sortBy) => {
    const { owner, environmentId, componentId } = await setup();
    const path = parent === "component" ? componentPath(componentId) : environmentPath(environmentId);
    const created: VariableBody[] = [];
    for (let i = 0; i < 7; i++)
      created.push(await createVariable(owner, path, { name: `V${i}`, value: `s${i}` }));
    const ascending = [...created].sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1,
    );
    const expected = sortBy === "-created_at" ? ascending.reverse() : ascending;
    const seen: VariableBody[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const query = new URLSearchParams({ limit: "3", sort_by: sortBy });
      if (after) query.set("after", after);
      const res = await request<ListBody>("GET", `${path}?${query}`, { key: owner.key });
      expect(res.status).toBe(200);
      seen.push(...res.body.data);
      expect(res.raw).not.toMatch(/"s\d"/);
      if (!res.body.has_more) {
        expect("next_page" in res.body).toBe(false);
        break;
      }
      expect(res.body.next_page).toMatch(/^[a-zA-Z0-9+/=]+$/);
      after = res.body.next_page;
    }
    expect(seen.map((v) => v.id)).toEqual(expected.map((v) => v.id));
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

  it("an unknown or invisible parent is 404", async () => {
    const { owner } = await setup();
    for (const path of [componentPath("a".repeat(32)), environmentPath("a".repeat(32))]) {
      const res = await request<ErrorBody>("GET", path, { key: owner.key });
      expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    }
  });

  runCommonRouteTests("GET /v1/components/{id}/variables", async () => {
    const { owner, componentId } = await setup();
    return { method: "GET", path: componentPath(componentId), caller: owner };
  });

  runCommonRouteTests("GET /v1/environments/{id}/variables", async () => {
    const { owner, environmentId } = await setup();
    return { method: "GET", path: environmentPath(environmentId), caller: owner };
  });
});
