/**
 * API_CONTRACT §32 "While it moves": every request answers as it would otherwise, but a write may
 * answer `408 timeout` with `Retry-After` (never a 5xx); a write answered `2xx` is in the
 * organization after the move, one answered `408` changed nothing; writes are refused for at most
 * 10 s in all; other organizations never wait on the move.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { type Caller, createProject, unique } from "../../helpers/factories";
import { fence, startMove, waitForMove } from "../../helpers/moves";
import { sleep } from "../../helpers/wait";

type Outcome = { name: string; status: number; code?: string; retryAfter: string | null; at: number };

/** Creates variables in `environmentId` one after the other until `stop()`; what each answered. */
async function writer(caller: Caller, environmentId: string, stop: () => boolean): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const end = Date.now() + 45_000;
  while (!stop() && Date.now() < end) {
    const name = unique("W").replace(/-/g, "_");
    const res = await request<{ code?: string }>("POST", `/v1/environments/${environmentId}/variables`, {
      key: caller.key,
      body: { name, type: "string", value: "v" },
    });
    outcomes.push({
      name,
      status: res.status,
      code: res.body.code,
      retryAfter: res.headers.get("retry-after"),
      at: Date.now(),
    });
    // A client's pace: a request, then the next one a moment later.
    await sleep(10);
  }
  return outcomes;
}

async function variableNames(caller: Caller, environmentId: string): Promise<Set<string>> {
  const res = await request<{ data: { name: string }[] }>(
    "GET",
    `/v1/environments/${environmentId}/variables?limit=200`,
    { key: caller.key },
  );
  expect(res.status, res.raw).toBe(200);
  return new Set(res.body.data.map((variable) => variable.name));
}

describe("writes while an organization moves", () => {
  for (const [from, to] of [
    ["DB", "DB_ORG_2"],
    ["DB_ORG_2", "DB"],
  ] as const) {
    it(`${from} → ${to}: each 2xx is there after, each 408 changed nothing, never a 5xx; another organization never waits`, async () => {
      const { owner } = await createOrgWithOwnerIn(from);
      const project = await createProject(owner);
      const { owner: neighbour } = await createOrgWithOwnerIn(from);
      const theirs = await createProject(neighbour);
      let finished = false;
      const stop = () => finished;
      const writers = [
        writer(owner, project.default_environment_id, stop),
        writer(owner, project.default_environment_id, stop),
        writer(neighbour, theirs.default_environment_id, stop),
      ];
      // Writes before the move, during its copy and its switch, and after it.
      await sleep(300);
      const move = await startMove(owner.orgId, to);
      const done = await waitForMove(move.id).finally(() => {
        finished = true;
      });
      const [a = [], b = [], other = []] = await Promise.all(writers);
      expect(done.state).toBe("completed");

      const mine = [...a, ...b];
      expect(mine.length).toBeGreaterThanOrEqual(4);
      for (const outcome of mine) {
        expect([201, 408], JSON.stringify(outcome)).toContain(outcome.status);
        if (outcome.status === 408) expect(outcome).toMatchObject({ code: "timeout", retryAfter: "1" });
      }
      const names = await variableNames(owner, project.default_environment_id);
      for (const outcome of mine) expect(names.has(outcome.name), outcome.name).toBe(outcome.status === 201);
      const refused = mine.filter((outcome) => outcome.status === 408).map((outcome) => outcome.at);
      if (refused.length > 0) expect(Math.max(...refused) - Math.min(...refused)).toBeLessThan(10_000);

      // The neighbour in the same database never met the move.
      expect(other.length).toBeGreaterThanOrEqual(2);
      expect(other.every((outcome) => outcome.status === 201)).toBe(true);
      const theirNames = await variableNames(neighbour, theirs.default_environment_id);
      expect(other.every((outcome) => theirNames.has(outcome.name))).toBe(true);
    }, 60_000);
  }
});

describe("the fence of a switch", () => {
  it("refuses every write of the organization with 408 and Retry-After, changing nothing; its reads go on; its Idempotency-Key runs once the fence is gone", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const project = await createProject(owner);
    const { owner: neighbour } = await createOrgWithOwnerIn("DB");
    const lift = await fence("DB", org.id);
    const keyed = { "idempotency-key": unique("fenced") };
    const refused = await request<{ code: string }>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "fenced" },
      headers: keyed,
    });
    expect(refused.status, refused.raw).toBe(408);
    expect(refused.body.code).toBe("timeout");
    expect(refused.headers.get("retry-after")).toBe("1");
    // Every kind of write: an update, a delete, an internal write, a limit.
    const patch = await request("PATCH", `/v1/environments/${project.default_environment_id}`, {
      key: owner.key,
      body: { name: "changed" },
    });
    expect(patch.status, patch.raw).toBe(408);
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(408);
    expect((await internal("POST", `/projects/${project.id}/environments`, { name: "fenced" })).status).toBe(
      408,
    );
    expect((await internal("PUT", `/orgs/${org.id}/limits`, { projects: 3 })).status).toBe(408);
    // Reads answer as ever; the neighbour writes.
    const read = await request<{ name: string }>(
      "GET",
      `/v1/environments/${project.default_environment_id}`,
      {
        key: owner.key,
      },
    );
    expect(read.status).toBe(200);
    expect(read.body.name).not.toBe("changed");
    expect(
      (await request("POST", "/v1/projects", { key: neighbour.key, body: { name: "free" } })).status,
    ).toBe(201);
    const list = await request<{ data: unknown[] }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toHaveLength(1);
    const rows = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE org_id = ? AND action != 'internal.addOrgMember'",
    )
      .bind(org.id)
      .first<{ n: number }>();

    await lift();
    const retried = await request<{ name: string }>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "fenced" },
      headers: keyed,
    });
    expect(retried.status, retried.raw).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    const after = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE org_id = ? AND action != 'internal.addOrgMember'",
    )
      .bind(org.id)
      .first<{ n: number }>();
    expect(after?.n).toBe((rows?.n ?? 0) + 1);
  });
});
