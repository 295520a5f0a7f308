/** An organization's limits (API_CONTRACT §29): set by the operator, read by a key of the organization. */
import { expect } from "vitest";
import type { LimitName, OrgLimitsRecord } from "../../src/schemas/limits";
import { internal, internalOk, request } from "./api";
import { expectError } from "./expect";
import type { Caller } from "./factories";

/** The operator's change (`PUT /internal/v1/orgs/{org_id}/limits`). */
export function setLimits(orgId: string, limits: Partial<Record<LimitName, number>>) {
  return internalOk<OrgLimitsRecord>("PUT", `/orgs/${orgId}/limits`, limits);
}

/** `GET /v1/orgs/{org_id}/limits` with `caller`'s key; must answer 200. */
export async function readLimits(caller: Caller): Promise<OrgLimitsRecord> {
  const res = await request<OrgLimitsRecord>("GET", `/v1/orgs/${caller.orgId}/limits`, { key: caller.key });
  expect(res.status, res.raw).toBe(200);
  return res.body;
}

/** One limit's `{limit, used}` (and `reset`) as the caller reads it now. */
export async function limitOf(caller: Caller, name: LimitName) {
  const item = (await readLimits(caller)).limits.find((l) => l.name === name);
  if (!item) throw new Error(`no limit ${name}`);
  return item;
}

/** `used` of every limit, by name, as the caller reads it now. */
export async function usedOf(caller: Caller): Promise<Record<LimitName, number>> {
  const { limits } = await readLimits(caller);
  return Object.fromEntries(limits.map((l) => [l.name, l.used])) as Record<LimitName, number>;
}

/** The refusal of a request that would exceed `name`: `409 conflict`, cause `limits.<name>`, the limit named. */
export function expectLimitRefusal(res: { status: number; body: unknown; raw?: string }, name: LimitName) {
  const body = expectError(res, 409, "conflict", `limits.${name}`);
  expect(body.message).toContain(`\`${name}\``);
  return body;
}

/** The internal key create and a key made by a key (§21) for `owner`, each refused by the `api_keys` limit. */
export async function expectKeyCreatesRefused(orgId: string, owner: Caller) {
  expectLimitRefusal(
    await internal("POST", `/orgs/${orgId}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    }),
    "api_keys",
  );
  expectLimitRefusal(await request("POST", "/v1/api-keys", { key: owner.key, body: {} }), "api_keys");
}
