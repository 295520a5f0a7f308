/** Who may read and change variables (API_CONTRACT §5). */

import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller } from "../../helpers/factories";
import { componentPath, createVariable, environmentPath, reveal, setup } from "../../helpers/variables";

describe("roles", () => {
  it("a viewer reads records and lists, and is 403 forbidden for every write and for the value", async () => {
    const { org, owner, project, environmentId, componentId } = await setup();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const variable = await createVariable(owner, componentPath(componentId), {
      value: "viewer-must-not-see",
    });
    expect((await request("GET", `/v1/variables/${variable.id}`, { key: viewer.key })).status).toBe(200);
    expect((await request("GET", componentPath(componentId), { key: viewer.key })).status).toBe(200);
    expect((await request("GET", environmentPath(environmentId), { key: viewer.key })).status).toBe(200);
    const body = { name: "V", type: "secret", value: "x" };
    for (const [method, path, withBody] of [
      ["GET", `/v1/variables/${variable.id}/value`, false],
      ["PUT", `/v1/variables/${variable.id}`, true],
      ["DELETE", `/v1/variables/${variable.id}`, false],
      ["POST", componentPath(componentId), true],
      ["POST", environmentPath(environmentId), true],
    ] as const) {
      const res = await request<ErrorBody>(method, path, {
        key: viewer.key,
        body: withBody ? body : undefined,
      });
      expect([method, path, res.status, res.body.code]).toEqual([method, path, 403, "forbidden"]);
      expect(res.raw).not.toContain("viewer-must-not-see");
    }
    expect((await reveal(owner, variable.id)).body.value).toBe("viewer-must-not-see");
  });

  it("a contributor does everything; an org member outside the project sees nothing (404)", async () => {
    const { org, owner, project, componentId } = await setup();
    const contributor = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, contributor, "contributor");
    const variable = await createVariable(contributor, componentPath(componentId), { value: "c" });
    expect((await reveal(contributor, variable.id)).body.value).toBe("c");
    const put = await request("PUT", `/v1/variables/${variable.id}`, {
      key: contributor.key,
      body: { name: "C", type: "string", value: "d" },
    });
    expect(put.status).toBe(200);
    for (const [method, path] of [
      ["GET", `/v1/variables/${variable.id}`],
      ["GET", `/v1/variables/${variable.id}/value`],
      ["GET", componentPath(componentId)],
      ["DELETE", `/v1/variables/${variable.id}`],
    ] as const) {
      const res = await request<ErrorBody>(method, path, { key: outsider.key });
      expect([res.status, res.body.code]).toEqual([404, "not_found"]);
    }
    expect((await request("DELETE", `/v1/variables/${variable.id}`, { key: contributor.key })).status).toBe(
      204,
    );
  });
});
