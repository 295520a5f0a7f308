/**
 * API_CONTRACT §32, a move's two records: the directory's (the move itself) and its source's
 * capture of the organization's changes, with the request's `internal.moveOrganization` entry. A
 * request whose second record fails leaves no move behind (its 5xx changed nothing), and a move
 * whose request was cut short between the two (no capture: a write during its copy would be lost
 * at the switch, and no fence would hold the organization) fails, undone, having copied nothing.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext } from "../../../src/context";
import { newId } from "../../../src/lib/ids";
import { recordMove } from "../../../src/services/moves/moves";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { createProject, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { moveObject, orgRowsIn, readMove, startMove, waitForMove } from "../../helpers/moves";

/**
 * `db`, its sessions too, failing every batch (a single statement runs): refused, or (`committed`)
 * run and then failed, as a batch whose answer was lost on its way back.
 */
function refusingBatches<T extends object>(db: T, committed = false): T {
  return new Proxy(db, {
    get(inner, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (committed) await (inner as unknown as D1Database).batch(statements);
          throw new Error("D1 unavailable (injected)");
        };
      }
      if (prop === "withSession") {
        return (start: string) =>
          refusingBatches((inner as unknown as D1Database).withSession(start), committed);
      }
      const value = Reflect.get(inner, prop);
      return typeof value === "function" ? value.bind(inner) : value;
    },
  });
}

/** Runs that fail are logged as errors by design; these tests cause them on purpose. */
const errors = captureLogs("error");

describe("a move's records", () => {
  it.each([
    ["refusing", false],
    ["committing, its answer lost,", true],
  ])(
    "its source %s the capture's batch: the request fails and leaves no move, nor a capture; the next request moves the organization",
    async (_, committed) => {
      const { org, owner } = await createOrgWithOwnerIn("DB");
      await createProject(owner);
      const refusing = refusingBatches(env.DB, committed);
      const ctx = {
        ...createServiceContext({ env: { ...env, DB: refusing }, requestId: unique("test"), database: "DB" }),
        request: { operationId: "internal.moveOrganization", ip: null, userAgent: null },
      };
      await expect(recordMove(ctx, org.id, "DB_ORG_2")).rejects.toThrow(/injected/);
      const unfinished = await env.DB.prepare(
        "SELECT count(*) AS n FROM org_moves WHERE org_id = ? AND state IN ('copying', 'switching')",
      )
        .bind(org.id)
        .first<{ n: number }>();
      expect(unfinished?.n).toBe(0);
      const capture = await env.DB.prepare("SELECT count(*) AS n FROM moving_orgs WHERE org_id = ?")
        .bind(org.id)
        .first<{ n: number }>();
      expect(capture?.n).toBe(0);
      const move = await startMove(org.id, "DB_ORG_2");
      expect((await waitForMove(move.id, "completed")).state).toBe("completed");
    },
  );

  it("its request cut short between its two records (no capture in its source): it fails, undone, having copied nothing", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB");
    await createProject(owner);
    // The directory's record alone, as the request left it before its crash.
    const id = newId();
    const now = new Date().toISOString();
    await env.DB.prepare(
      "INSERT INTO org_moves (id, org_id, from_database, to_database, state, rows_copied, created_at, updated_at) VALUES (?, ?, 'DB', 'DB_ORG_2', 'copying', 0, ?, ?)",
    )
      .bind(id, org.id, now, now)
      .run();
    await moveObject(id).start(await readMove(id));
    const failed = await waitForMove(id, "failed");
    expect(failed.error).toMatch(/capture of changes was never recorded/);
    expect(await orgRowsIn("DB_ORG_2", org.id)).toEqual({});
    const home = await env.DB.prepare("SELECT database FROM organizations WHERE id = ?")
      .bind(org.id)
      .first<{ database: string }>();
    expect(home?.database).toBe("DB");
    expect(errors.lines().length).toBeGreaterThan(0);
  });
});
