/** The two variable lists (listComponentVariables, listEnvironmentVariables) walked end to end. */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  componentPath,
  createVariable,
  environmentPath,
  type ListBody,
  setup,
  type VariableBody,
} from "../../helpers/variables";

describe("lists", () => {
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
});
