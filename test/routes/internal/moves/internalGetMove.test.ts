/** internalGetMove: GET /internal/v1/moves/{id} (API_CONTRACT §32). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { createOrgIn } from "../../../helpers/databases";
import { expectError, UNKNOWN_ID } from "../../../helpers/expect";
import { type Move, startMove, waitForMove } from "../../../helpers/moves";
import { runInternalRouteTests } from "../../../helpers/security";

describe("GET /internal/v1/moves/{id}", () => {
  it("answers the move as it stands, rows_copied counting up to what it copied", async () => {
    const org = await createOrgIn("DB_ORG_2");
    const started = await startMove(org.id, "DB");
    const res = await internal<Move>("GET", `/moves/${started.id}`);
    expect(res.status, res.raw).toBe(200);
    expect(res.body).toMatchObject({ id: started.id, org_id: org.id, from: "DB_ORG_2", to: "DB" });
    const done = await waitForMove(started.id);
    // Its row, its limits' row is copied at the switch, not counted: at least the organization's own.
    expect(done.rows_copied).toBeGreaterThanOrEqual(1);
    expect(done.rows_copied).toBeGreaterThanOrEqual(res.body.rows_copied);
  });

  it("404 for an unknown move", async () => {
    expectError(await internal("GET", `/moves/${UNKNOWN_ID}`), 404, "not_found");
  });

  runInternalRouteTests("GET /internal/v1/moves/{id}", async () => {
    const org = await createOrgIn("DB");
    const move = await startMove(org.id, "DB_ORG_2");
    return { method: "GET", path: `/internal/v1/moves/${move.id}` };
  });
});
