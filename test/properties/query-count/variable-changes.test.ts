/**
 * The work of a change to a scope's variables (API_CONTRACT §18), counted on the real bindings
 * (test/helpers/work-counts.ts): one read and one batch whatever the number of names, and a
 * single variable's create making its version without a read.
 */
import { describe, expect, it } from "vitest";
import { createOrgWithOwner, createProject } from "../../helpers/factories";
import { freshKey, measure } from "../../helpers/work-counts";

describe("work per change of a scope's variables (API_CONTRACT §18)", () => {
  /** A PATCH of `names` new variables of the environment, measured with a warm key. */
  async function measureChange(key: string, environmentId: string, names: number, prefix: string) {
    const variables = Object.fromEntries(
      Array.from({ length: names }, (_, i) => [`${prefix}${i}`, { type: "secret", value: `value-${i}` }]),
    );
    return measure(`/v1/environments/${environmentId}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({ variables }),
    });
  }

  it("a change of N names is one read and one batch whatever N: its statements do not grow with it", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    // The read (lookup, the scope's variables, its current version), then the batch: the version,
    // the audit entry, the variables (one statement) and the version's values (one statement).
    const write = {
      status: 200,
      d1Statements: 7,
      d1RoundTrips: 2,
      limiterCalls: 2,
      sessions: ["first-primary"],
    };
    expect(await measureChange(key, project.default_environment_id, 1, "ONE_")).toEqual(write);
    expect(await measureChange(key, project.default_environment_id, 500, "MANY_")).toEqual(write);
    // Updating and deleting in the same change adds one statement each, not one per name.
    const mixed = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({
        variables: Object.fromEntries(
          Array.from({ length: 400 }, (_, i) => [`MANY_${i}`, i % 2 ? null : { type: "string", value: "x" }]),
        ),
      }),
    });
    expect(mixed).toEqual({ ...write, d1Statements: 8 });
    // A dry run stops after the read.
    const dry = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "PATCH",
      body: JSON.stringify({ variables: { MANY_0: null }, dry_run: true }),
    });
    expect(dry).toEqual({ ...write, d1Statements: 3, d1RoundTrips: 1 });
  });

  it("a single variable's create makes its version in its own batch: the scope's current version costs no read", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const key = await freshKey(owner.orgId, owner.accountId);
    await measure("/v1/projects", key); // warms the key
    const created = await measure(`/v1/environments/${project.default_environment_id}/variables`, key, {
      method: "POST",
      body: JSON.stringify({ name: "SINGLE", type: "secret", value: "v" }),
    });
    // The environment's lookup, then the variable, its version, the version's value, the entry.
    expect(created).toEqual({
      status: 201,
      d1Statements: 5,
      d1RoundTrips: 2,
      limiterCalls: 2,
      sessions: ["first-primary"],
    });
  });
});
