/**
 * The three deployment lists (listDeployments, listEnvironmentDeployments, listStackDeployments)
 * walked end to end: every scope pages with no repeats or gaps, and the status filter behaves
 * the same in each, bound to the cursor.
 */
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deployIn } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import {
  addProjectMember,
  createCaller,
  createDeployment,
  createEnvironment,
  createProject,
  createProjectWithStack,
  createStack,
} from "../../helpers/factories";
import { byCreated, walkPages } from "../../helpers/pages";

type Deployment = DeploymentRecord;
type List<T> = { data: T[]; has_more: boolean; next_page?: string };

describe("deployment lists", () => {
  it.each(["created_at", "+created_at", "-created_at"])(
    "pages through every scope under sort_by=%s with no repeats or gaps",
    async (sortBy) => {
      const { org, owner, project, environmentId, stack } = await createProjectWithStack();
      const second = await createStack(environmentId);
      const otherEnv = await createEnvironment(project.id);
      const otherStack = await createStack(otherEnv.id);
      // A second project, so that /v1/deployments pages across projects as well.
      const elsewhere = (await createProject(owner)).default_environment_id;
      const elsewhereStack = await createStack(elsewhere);
      const made: Deployment[] = [];
      for (let i = 0; i < 9; i++) {
        made.push(
          i % 4 === 3
            ? await createDeployment(elsewhere, [elsewhereStack.id])
            : i % 3 === 2
              ? await createDeployment(otherEnv.id, [otherStack.id])
              : await createDeployment(environmentId, i % 2 ? [second.id] : [stack.id, second.id]),
        );
      }
      const asc = [...made].sort(byCreated);
      const order = (rows: Deployment[]) =>
        (sortBy === "-created_at" ? [...rows].reverse() : rows).map((d) => d.id);
      expect(await walkPages(owner.key, "/v1/deployments", sortBy, 2)).toEqual(order(asc));
      const member = await createCaller(org, "member", owner);
      await addProjectMember(owner, project.id, member, "viewer");
      const inProject = new Set([environmentId, otherEnv.id]);
      expect(await walkPages(member.key, "/v1/deployments", sortBy, 2)).toEqual(
        order(asc.filter((d) => inProject.has(d.environment_id))),
      );
      expect(await walkPages(owner.key, `/v1/environments/${environmentId}/deployments`, sortBy, 2)).toEqual(
        order(asc.filter((d) => d.environment_id === environmentId)),
      );
      expect(await walkPages(owner.key, `/v1/stacks/${second.id}/deployments`, sortBy, 2)).toEqual(
        order(asc.filter((d) => d.stack_ids.includes(second.id))),
      );
    },
  );

  it("status filter: repeated or comma-separated, compared as a set, bound to the cursor", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const made: Record<string, Deployment[]> = {};
    for (const status of [
      "queued",
      "failed",
      "cancelled",
      "succeeded",
      "failed",
      "cancelled",
      "in_progress",
    ]) {
      const d = await deployIn(environmentId, [stack.id], status);
      made[status] = [...(made[status] ?? []), d];
    }
    const wanted = [...(made.failed ?? []), ...(made.cancelled ?? [])]
      .sort(byCreated)
      .reverse()
      .map((d) => d.id);
    for (const path of [
      "/v1/deployments",
      `/v1/environments/${environmentId}/deployments`,
      `/v1/stacks/${stack.id}/deployments`,
    ]) {
      expect(await walkPages(owner.key, path, "-created_at", 3, "&status=failed,cancelled")).toEqual(wanted);
      expect(await walkPages(owner.key, path, "-created_at", 1, "&status=cancelled&status=failed")).toEqual(
        wanted,
      );
      const single = await request<List<Deployment>>("GET", `${path}?status=queued`, { key: owner.key });
      expect(single.body.data.map((d) => d.id)).toEqual(made.queued?.map((d) => d.id));

      const first = await request<List<Deployment>>("GET", `${path}?limit=1&status=failed,cancelled`, {
        key: owner.key,
      });
      const cursor = encodeURIComponent(first.body.next_page ?? "");
      // The same set in another spelling and order takes the cursor…
      const same = await request<List<Deployment>>(
        "GET",
        `${path}?limit=1&status=cancelled&status=failed&status=cancelled&after=${cursor}`,
        { key: owner.key },
      );
      expect(same.status).toBe(200);
      expect(same.body.data.map((d) => d.id)).toEqual([wanted[1]]);
      // …another set, or none, does not.
      for (const query of ["status=failed", "", "status=failed,cancelled,queued"]) {
        const res = await request<ErrorBody>("GET", `${path}?${query}&after=${cursor}`, { key: owner.key });
        expect([res.status, res.body.code]).toEqual([400, "bad_input"]);
      }
    }
  });
});
