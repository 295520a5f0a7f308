/** internalCancelMove: POST /internal/v1/moves/{id}/cancel (API_CONTRACT §32). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { newId } from "../../../../src/lib/ids";
import { internal, request } from "../../../helpers/api";
import { createOrgIn, createOrgWithOwnerIn } from "../../../helpers/databases";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { createProject } from "../../../helpers/factories";
import { type Move, orgRowsIn, readMove, startMove, waitForMove } from "../../../helpers/moves";
import { runInternalRouteTests } from "../../../helpers/security";
import { sleep } from "../../../helpers/wait";

describe("POST /internal/v1/moves/{id}/cancel", () => {
  it("200 cancelled: the target holds none of its rows, the source stops recording, the organization works where it was", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    await createProject(owner);
    const move = await startMove(org.id, "DB_ORG_2");
    const res = await internal<Move>("POST", `/moves/${move.id}/cancel`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ id: move.id, state: "cancelled", error: null });
    expect(res.body.finished_at).not.toBeNull();
    expect(await readMove(move.id)).toEqual(res.body);
    expect(await orgRowsIn("DB_ORG_2", org.id)).toEqual({});
    const source = await orgRowsIn("DB", org.id);
    expect(source.moving_orgs).toBeUndefined();
    expect(source.move_changes).toBeUndefined();
    expect((await internal("GET", `/orgs/${org.id}`)).body).toMatchObject({ database: "DB" });
    const made = await request("POST", "/v1/projects", { key: owner.key, body: { name: "after-cancel" } });
    expect(made.status, made.raw).toBe(201);
    // Both in the organization's log: the move asked for, and its cancel.
    const log = await request<{ data: { action: string; changes: unknown }[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log?action=internal.cancelMove`,
      { key: owner.key },
    );
    expect(log.body.data).toEqual([
      expect.objectContaining({
        action: "internal.cancelMove",
        changes: { database: { from: "DB_ORG_2", to: "DB" } },
      }),
    ]);
    // It stays cancelled (its object runs no more); a new move may start.
    await sleep(300);
    expect((await readMove(move.id)).state).toBe("cancelled");
    expect((await waitForMove((await startMove(org.id, "DB_ORG_2")).id)).state).toBe("completed");
  });

  it("of cancels sent at once, exactly one answers 200 and writes the entry; the others are 409", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    await createProject(owner);
    const move = await startMove(org.id, "DB_ORG_2");
    const answers = await Promise.all(
      [1, 2, 3].map(() => internal<Move>("POST", `/moves/${move.id}/cancel`)),
    );
    expect(answers.map((res) => res.status).sort()).toEqual([200, 409, 409]);
    for (const res of answers.filter((r) => r.status === 409)) expectError(res, 409, "conflict");
    expect((await readMove(move.id)).state).toBe("cancelled");
    const log = await request<{ data: unknown[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log?action=internal.cancelMove`,
      { key: owner.key },
    );
    expect(log.body.data).toHaveLength(1);
  });

  it("409 once it is finished, and while it is switching", async () => {
    const org = await createOrgIn("DB");
    const move = await startMove(org.id, "DB_ORG_2");
    await waitForMove(move.id);
    expectError(await internal("POST", `/moves/${move.id}/cancel`), 409, "conflict");
    const cancelled = await startMove(org.id, "DB");
    await internal("POST", `/moves/${cancelled.id}/cancel`);
    expectError(await internal("POST", `/moves/${cancelled.id}/cancel`), 409, "conflict");
    // A move the directory records as switching (its object at the switch) is not stopped.
    const id = newId();
    const now = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO org_moves (id, org_id, from_database, to_database, state, rows_copied, created_at, updated_at) VALUES (?, ?, 'DB_ORG_2', 'DB', 'switching', 0, ?, ?)",
    )
      .bind(id, newId(), now, now)
      .run();
    expectError(await internal("POST", `/moves/${id}/cancel`), 409, "conflict");
    expect((await readMove(id)).state).toBe("switching");
    await env.DB.prepare("DELETE FROM org_moves WHERE id = ?").bind(id).run();
  });

  it("404 for an unknown move", async () => {
    expectError(await internal("POST", `/moves/${UNKNOWN_ID}/cancel`), 404, "not_found");
  });

  runInternalRouteTests("POST /internal/v1/moves/{id}/cancel", async () => {
    const org = await createOrgIn("DB");
    const move = await startMove(org.id, "DB_ORG_2");
    return { method: "POST", path: `/internal/v1/moves/${move.id}/cancel` };
  });
});
