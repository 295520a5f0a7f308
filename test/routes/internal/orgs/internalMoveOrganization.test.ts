/** internalMoveOrganization: POST /internal/v1/orgs/{org_id}/moves (API_CONTRACT §32). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { internal, request } from "../../../helpers/api";
import { createOrgIn, createOrgWithOwnerIn } from "../../../helpers/databases";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { createProject } from "../../../helpers/factories";
import { type Move, startMove, waitForMove } from "../../../helpers/moves";
import { runInternalRouteTests } from "../../../helpers/security";

describe("POST /internal/v1/orgs/{org_id}/moves", () => {
  it("202: the move, copying, at Location; it completes by itself", async () => {
    const org = await createOrgIn("DB");
    const res = await internal<Move>("POST", `/orgs/${org.id}/moves`, { to: "DB_ORG_2" });
    expect(res.status, res.raw).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{22}$/),
      org_id: org.id,
      from: "DB",
      to: "DB_ORG_2",
      state: "copying",
      rows_copied: 0,
      error: null,
      created_at: expect.any(String),
      finished_at: null,
    });
    expect(res.headers.get("location")).toBe(`/internal/v1/moves/${res.body.id}`);
    const done = await waitForMove(res.body.id);
    expect(done).toMatchObject({ state: "completed", error: null, created_at: res.body.created_at });
    expect(done.finished_at && done.finished_at >= done.created_at).toBe(true);
  });

  it("400 with cause `to`: the organization's own database, a name not in ORG_DATABASES, none, not a string; an unknown field", async () => {
    const org = await createOrgIn("DB_ORG_2");
    for (const to of ["DB_ORG_2", "DB_ORG_3", "db", "", 2, null]) {
      expectError(await internal("POST", `/orgs/${org.id}/moves`, { to }), 400, "bad_input", "to");
    }
    expectError(await internal("POST", `/orgs/${org.id}/moves`, {}), 400, "bad_input", "to");
    expectError(
      await internal("POST", `/orgs/${org.id}/moves`, { to: "DB", when: "now" }),
      400,
      "bad_input",
      "when",
    );
    // Nothing started.
    const moves = await env.DB.prepare("SELECT count(*) AS n FROM org_moves WHERE org_id = ?")
      .bind(org.id)
      .first<{ n: number }>();
    expect(moves?.n).toBe(0);
    expect((await internal("GET", `/orgs/${org.id}`)).body).toMatchObject({ database: "DB_ORG_2" });
  });

  it("404 for an unknown organization", async () => {
    expectError(await internal("POST", `/orgs/${UNKNOWN_ID}/moves`, { to: "DB" }), 404, "not_found");
  });

  it("409 while another move of it is not finished; once it is, a move back may follow", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    await createProject(owner);
    const first = await startMove(org.id, "DB_ORG_2");
    const again = await internal("POST", `/orgs/${org.id}/moves`, { to: "DB_ORG_2" });
    expectError(again, 409, "conflict");
    expect((await waitForMove(first.id)).state).toBe("completed");
    const back = await startMove(org.id, "DB");
    expect(back).toMatchObject({ from: "DB_ORG_2", to: "DB", state: "copying" });
    expect((await waitForMove(back.id)).state).toBe("completed");
  });

  it("writes internal.moveOrganization at the request and internal.completeMove at the switch, in the organization's log", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    const res = await internal<Move>("POST", `/orgs/${org.id}/moves`, { to: "DB_ORG_2" });
    await waitForMove(res.body.id);
    const log = await request<{ data: Record<string, unknown>[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log?after_sequence=0`,
      { key: owner.key },
    );
    expect(log.status, log.raw).toBe(200);
    const [move, complete] = log.body.data.slice(-2);
    const change = { database: { from: "DB", to: "DB_ORG_2" } };
    expect(move).toMatchObject({
      action: "internal.moveOrganization",
      actor: { type: "admin" },
      target: { type: "organization", id: org.id },
      request_id: res.headers.get("x-request-id"),
      changes: change,
    });
    expect(complete).toMatchObject({
      action: "internal.completeMove",
      actor: { type: "admin" },
      target: { type: "organization", id: org.id },
      changes: change,
    });
  });

  runInternalRouteTests("POST /internal/v1/orgs/{org_id}/moves", async () => {
    const org = await createOrgIn("DB");
    return { method: "POST", path: `/internal/v1/orgs/${org.id}/moves`, body: { to: "DB_ORG_2" } };
  });
});
