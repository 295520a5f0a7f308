/** revealVariable: GET /v1/variables/{variable_id}/value, a variable's value. */
import { describe, expect, it } from "vitest";
import { PRODUCTION_LIMITS, request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller } from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, environmentPath, reveal, setup } from "../../helpers/variables";

describe("GET /v1/variables/{id}/value", () => {
  it("answers the stored value, marked no-store; an unknown variable is 404", async () => {
    const { owner, environmentId } = await setup();
    const value = `s3cr3t ✓ ${crypto.randomUUID()}`;
    const variable = await createVariable(owner, environmentPath(environmentId), { type: "secret", value });
    const res = await reveal(owner, variable.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ value });
    expect(res.headers.get("cache-control")).toBe("no-store");
    const missing = await request<ErrorBody>("GET", `/v1/variables/${"a".repeat(32)}/value`, {
      key: owner.key,
    });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("a project viewer is 403 forbidden and never sees the value; a contributor reveals it", async () => {
    const { org, owner, project, componentId } = await setup();
    const [viewer, contributor] = [
      await createCaller(org, "member", owner),
      await createCaller(org, "member", owner),
    ];
    await addProjectMember(owner, project.id, viewer, "viewer");
    await addProjectMember(owner, project.id, contributor, "contributor");
    const variable = await createVariable(owner, componentPath(componentId), { value: "not-for-viewers" });
    const denied = await reveal(viewer, variable.id);
    expect([denied.status, (denied.body as unknown as ErrorBody).code]).toEqual([403, "forbidden"]);
    expect(denied.raw).not.toContain("not-for-viewers");
    expect((await reveal(contributor, variable.id)).body).toEqual({ value: "not-for-viewers" });
  });

  it("is under the `reveal` rate-limit policy", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    // The production numbers (the test configuration raises every limit).
    const res = await request("GET", `/v1/variables/${variable.id}/value`, {
      key: owner.key,
      bindings: PRODUCTION_LIMITS,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBe("20");
    expect(res.headers.get("ratelimit-policy")).toBe('"reveal";q=20;w=60');
  });

  runCommonRouteTests("GET /v1/variables/{id}/value", async () => {
    const { owner, componentId } = await setup();
    const variable = await createVariable(owner, componentPath(componentId));
    return { method: "GET", path: `/v1/variables/${variable.id}/value`, caller: owner };
  });
});
