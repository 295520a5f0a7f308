/** removeProjectMember. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { addProjectMember, createCaller, createOwnedProject } from "../../helpers/factories";
import { listAll, membersPath, orgAccount } from "../../helpers/members";
import { runCommonRouteTests } from "../../helpers/security";

describe("DELETE /v1/projects/{id}/members/{member_id}", () => {
  it("removes a member (204, empty body); it is then 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    const res = await request("DELETE", membersPath(project.id, account.id), { key: owner.key });
    expect(res.status).toBe(204);
    expect(res.raw).toBe("");
    expect((await request("GET", membersPath(project.id, account.id), { key: owner.key })).status).toBe(404);
    const again = await request<ErrorBody>("DELETE", membersPath(project.id, account.id), { key: owner.key });
    expect([again.status, again.body.code]).toEqual([404, "not_found"]);
  });

  it("removing the last owner is 409 and keeps it", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<ErrorBody>("DELETE", membersPath(project.id, owner.accountId), {
      key: owner.key,
    });
    expect([res.status, res.body.code]).toEqual([409, "conflict"]);
    expect((await listAll(owner, project.id)).map((m) => m.role)).toEqual(["owner"]);
  });

  it("two owners removed at once: exactly one removal succeeds, one owner remains", async () => {
    const { org, owner, project } = await createOwnedProject();
    const second = await orgAccount(org);
    await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [second.id], role: "owner" },
    });
    // The org owner acts as project owner even after losing its membership, so it can send both.
    const [a, b] = await Promise.all([
      request("DELETE", membersPath(project.id, owner.accountId), { key: owner.key }),
      request("DELETE", membersPath(project.id, second.id), { key: owner.key }),
    ]);
    expect([a.status, b.status].sort()).toEqual([204, 409]);
    const owners = await listAll(owner, project.id, "&role=owner");
    expect(owners).toHaveLength(1);
  });

  it("a contributor may not remove members (403 forbidden)", async () => {
    const { org, owner, project } = await createOwnedProject();
    const contributor = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, contributor, "contributor");
    const res = await request<ErrorBody>("DELETE", membersPath(project.id, contributor.accountId), {
      key: contributor.key,
    });
    expect([res.status, res.body.code]).toEqual([403, "forbidden"]);
  });

  runCommonRouteTests("DELETE /v1/projects/{id}/members/{member_id}", async () => {
    const { org, owner, project } = await createOwnedProject();
    const account = await orgAccount(org);
    await request("POST", membersPath(project.id), { key: owner.key, body: { account_ids: [account.id] } });
    return { method: "DELETE", path: membersPath(project.id, account.id), caller: owner };
  });
});
