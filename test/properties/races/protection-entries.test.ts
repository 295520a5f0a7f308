/**
 * Writes of an environment's protection without If-Match racing each other (API_CONTRACT §26, §14,
 * §31): replaces, locks and unlocks sent at once. Each write is made from the protection as it
 * finds it, so each audit entry's `changes` says what that write changed (every `from` is what the
 * entry before it left, `updated_at` included), and the lock's and unlock's events carry the
 * protection as their step left it. Never a 500.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createOwnedProject } from "../../helpers/factories";
import { DEFAULT_SETTINGS, deleteLock, postLock, putProtection } from "../../helpers/protection";

type Change = { from: unknown; to: unknown };

describe("protection writes without If-Match, at once", () => {
  it("each entry's changes are what its write changed; each lock event's protection is the record as its step left it", async () => {
    const { owner, project } = await createOwnedProject();
    const environmentId = project.default_environment_id;
    const put = (n: number) =>
      putProtection(owner, environmentId, { ...DEFAULT_SETTINGS, required_approvals: n });
    for (let round = 0; round < 4; round++) {
      const first = await Promise.all([
        put(4 * round + 1),
        put(4 * round + 2),
        postLock(owner, environmentId, { reason: "freeze" }),
      ]);
      const second = await Promise.all([
        put(4 * round + 3),
        deleteLock(owner, environmentId),
        put(4 * round + 4),
      ]);
      for (const answer of [...first, ...second]) expect(answer.status, answer.raw).toBeLessThan(500);
    }
    const entries = await env.DB.prepare(
      "SELECT action, changes FROM audit_log WHERE target_type = 'environment_protection' AND target_id = ? ORDER BY sequence",
    )
      .bind(environmentId)
      .all<{ action: string; changes: string }>();
    const state: Record<string, unknown> = {
      required_approvals: DEFAULT_SETTINGS.required_approvals,
      locked: null,
    };
    let updatedAt: unknown;
    for (const [i, entry] of entries.results.entries()) {
      const changes = JSON.parse(entry.changes) as Record<string, Change>;
      for (const field of ["required_approvals", "locked"]) {
        const change = changes[field];
        if (!change) continue;
        expect(change.from, `entry ${i} (${entry.action}): ${field}`).toEqual(state[field]);
        state[field] = change.to;
      }
      if (updatedAt !== undefined) {
        expect(changes.updated_at?.from, `entry ${i} (${entry.action}): updated_at`).toBe(updatedAt);
      }
      updatedAt = changes.updated_at?.to;
    }
    // Each lock's and unlock's event: the protection as the entries say it stood then.
    const events = await env.DB.prepare(
      "SELECT type, data FROM events WHERE project_id = ? AND type IN ('environment.locked', 'environment.unlocked') ORDER BY created_at, id",
    )
      .bind(project.id)
      .all<{ type: string; data: string }>();
    expect(events.results.length).toBeGreaterThan(0);
    for (const event of events.results) {
      const { protection } = JSON.parse(event.data) as { protection: { updated_at: string } };
      const entry = entries.results.find((e) => {
        const changes = JSON.parse(e.changes) as Record<string, Change>;
        return changes.locked !== undefined && changes.updated_at?.to === protection.updated_at;
      });
      expect(entry, `${event.type} at ${protection.updated_at}`).toBeDefined();
      const before = entries.results.slice(
        0,
        entries.results.indexOf(entry as (typeof entries.results)[number]),
      );
      const approvals = [...before, entry]
        .map((e) => (JSON.parse(e?.changes ?? "{}") as Record<string, Change>).required_approvals?.to)
        .filter((to) => to !== undefined)
        .at(-1);
      expect(
        (protection as unknown as { required_approvals: number }).required_approvals,
        `${event.type} at ${protection.updated_at}`,
      ).toBe(approvals ?? DEFAULT_SETTINGS.required_approvals);
    }
  });
});
