/** listDeployments: GET /v1/deployments, the organization-wide list (API_CONTRACT §9 Deployment). */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import {
  addProjectMember,
  createCaller,
  createDeployment,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  createStack,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";

type Deployment = DeploymentRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

describe("GET /v1/deployments", () => {
  it("org owners and admins see every project's; members only their projects'", async () => {
    const { org, owner, project, environmentId, stack } = await createProjectWithStack();
    const other = await createProject(owner);
    const otherStack = await createStack(other.default_environment_id);
    const mine = await createDeployment(environmentId, [stack.id]);
    const theirs = await createDeployment(other.default_environment_id, [otherStack.id]);
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, member, "viewer");
    const stranger = await createOrgWithOwner();
    const strangerEnv = (await createProject(stranger.owner)).default_environment_id;
    const strangers = await createDeployment(strangerEnv, [(await createStack(strangerEnv)).id]);
    const ids = async (key: string) =>
      (await request<List<Deployment>>("GET", "/v1/deployments", { key })).body.data.map((d) => d.id);
    expect((await ids(owner.key)).sort()).toEqual([mine.id, theirs.id].sort());
    expect((await ids(admin.key)).sort()).toEqual([mine.id, theirs.id].sort());
    expect(await ids(member.key)).toEqual([mine.id]);
    expect(await ids(stranger.owner.key)).toEqual([strangers.id]);
  });

  runCommonRouteTests(
    "GET /v1/deployments",
    async () => {
      const { owner, environmentId, stack } = await createProjectWithStack();
      await createDeployment(environmentId, [stack.id]);
      return { method: "GET", path: "/v1/deployments", caller: owner };
    },
    // Every caller has a (possibly empty) list of its own: a stranger gets 200, never the data.
    { otherOrgStatus: 200 },
  );
});

describe("the status filter", () => {
  it("takes any number of values (a value given twice counts once) and refuses an unknown one", async () => {
    const { owner } = await createOrgWithOwner();
    const many = Array(500).fill("failed,cancelled").join(",");
    const ok = await request<{ data: unknown[] }>("GET", `/v1/deployments?status=${many}`, {
      key: owner.key,
    });
    expect([ok.status, ok.body.data], ok.raw).toEqual([200, []]);
    const bad = await request("GET", `/v1/deployments?status=${many},nope`, { key: owner.key });
    expect(bad.status, bad.raw).toBe(400);
    expect(bad.body).toMatchObject({ code: "bad_input", cause: [{ path: "status.1000" }] });
  });
});
