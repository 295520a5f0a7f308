/**
 * Shared by the tests of the seven project operations (test/routes/projects/; SPEC.md "Projects",
 * API_CONTRACT §3 Project, §5, §8, §10): the world they run in and callers by project role.
 */

import type { ProjectRole } from "../../src/db/schema";
import { addProjectMember, type Caller, createCaller, type Org, type Project } from "./factories";

export type ProjectBody = Project & {
  description: string | null;
  icon: string | null;
  repo_id: string | null;
  updated_at: string;
};
export type ProjectPage = { data: ProjectBody[]; has_more: boolean; next_page?: string };

/** An org member (no org power) with `role` on `project`, or with no membership when role is null. */
export async function projectCaller(org: Org, owner: Caller, project: Project, role: ProjectRole | null) {
  const caller = await createCaller(org, "member", owner);
  if (role) await addProjectMember(owner, project.id, caller, role);
  return caller;
}
