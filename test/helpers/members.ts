/** Shared by the project member tests (test/routes/members/): the world they run in and member lookups. */
import { expect } from "vitest";
import type { MemberRecord } from "../../src/schemas/member";
import { internalOk, request } from "./api";
import { type Account, type Caller, createAccount, type Org } from "./factories";

export type Member = MemberRecord;
export type MemberPage = { data: Member[]; has_more: boolean; next_page?: string };

export const NOWHERE = "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c";

/** An account that belongs to `org` (no API key: it only needs to be addable). */
export async function orgAccount(
  org: Pick<Org, "id">,
  fields: Record<string, unknown> = {},
): Promise<Account> {
  const account = await createAccount(fields);
  await internalOk("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "member" });
  return account;
}

export const membersPath = (projectId: string, accountId?: string) =>
  `/v1/projects/${projectId}/members${accountId ? `/${accountId}` : ""}`;

export async function listAll(caller: Caller, projectId: string, query = ""): Promise<Member[]> {
  const res = await request<MemberPage>("GET", `${membersPath(projectId)}?limit=240${query}`, {
    key: caller.key,
  });
  expect(res.status).toBe(200);
  return res.body.data;
}
