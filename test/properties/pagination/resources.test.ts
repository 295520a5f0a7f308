/** The two resource lists (listStackResources, listEnvironmentResources) walked end to end. */
import { describe, expect, it } from "vitest";
import type { StackResourceRecord } from "../../../src/schemas/resource";
import { createProjectWithStack, createResource, createStack } from "../../helpers/factories";
import { byCreated, walkPages } from "../../helpers/pages";

type Resource = StackResourceRecord;

describe("resource lists", () => {
  it.each(["created_at", "+created_at", "-created_at"])(
    "pages through both scopes under sort_by=%s with no repeats or gaps",
    async (sortBy) => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      const second = await createStack(environmentId);
      const made: Resource[] = [];
      for (let i = 0; i < 7; i++) made.push(await createResource(i % 2 ? second.id : stack.id));
      const ascending = [...made].sort(byCreated);
      const order = (rows: Resource[]) =>
        (sortBy === "-created_at" ? [...rows].reverse() : rows).map((r) => r.id);
      expect(await walkPages(owner.key, `/v1/environments/${environmentId}/resources`, sortBy, 2)).toEqual(
        order(ascending),
      );
      expect(await walkPages(owner.key, `/v1/stacks/${stack.id}/resources`, sortBy, 3)).toEqual(
        order(ascending.filter((r) => r.stack_id === stack.id)),
      );
    },
  );
});
