/**
 * Writes of one record landing at the same moment, without If-Match (API_CONTRACT §14: every
 * entry describes the change its request made; §2: what is gone is 404). Each write applies to
 * the record as it is when it lands (`writeLatest`, src/services/preconditions.ts): a write that
 * finds the record changed since it read it plans itself anew, so its answer and its audit entry
 * are exactly what it did. The requests run concurrently in the real runtime, against real D1.
 */
import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { ServiceContext } from "../../../src/context";
import { createDb } from "../../../src/db/client";
import { notificationIntegrations, projects } from "../../../src/db/schema";
import { ApiError } from "../../../src/errors";
import { recordEtag } from "../../../src/http/etag";
import { toIntegrationRecord } from "../../../src/services/integrations/integrations";
import {
  ifMatchGuard,
  unchangedSince,
  WRITE_ATTEMPTS,
  WRITE_PATIENCE_MS,
  writeLatest,
} from "../../../src/services/preconditions";
import { request } from "../../helpers/api";
import {
  type Caller,
  createApiKey,
  createOwnedProject,
  createProject,
  unique,
} from "../../helpers/factories";
import { ALL_OFF, createPublicIntegration, type Integration, one } from "../../helpers/integrations";
import { createVariable, environmentPath } from "../../helpers/variables";
import { sleep } from "../../helpers/wait";

const N = 16;
const ROUNDS = 4;

type Change = { from: unknown; to: unknown };
type Entry = { requestId: string; changes: Record<string, Change> | null };

/** The entries of `action` on `targetId`, oldest first. */
async function entriesOf(action: string, targetId: string): Promise<Entry[]> {
  const { results } = await env.DB.prepare(
    "SELECT request_id, changes FROM audit_log WHERE action = ? AND target_id = ? ORDER BY created_at, id",
  )
    .bind(action, targetId)
    .all<{ request_id: string; changes: string | null }>();
  return results.map((r) => ({ requestId: r.request_id, changes: r.changes ? JSON.parse(r.changes) : null }));
}

/**
 * The entries' changes of `field`, followed from `initial`: each must start where another ended,
 * so that together they lead, one after another, from `initial` to `final` through every entry.
 */
function expectChain(entries: Entry[], field: string, initial: unknown, final: unknown) {
  const next = new Map<string, unknown>();
  for (const entry of entries) {
    const change = entry.changes?.[field];
    expect(change, `an entry without ${field}`).toBeDefined();
    const from = JSON.stringify(change?.from);
    expect(next.has(from), `two entries replaced ${from}`).toBe(false);
    next.set(from, change?.to);
  }
  let at = initial;
  for (let i = 0; i < entries.length; i++) at = next.get(JSON.stringify(at));
  expect(at).toEqual(final);
}

const statuses = (responses: { status: number }[]) => responses.map((r) => r.status).sort((a, b) => a - b);

/**
 * The owner's account through N keys of its own: each key has its own limiter object, so the
 * requests are not lined up one after another by a shared one, and their reads land together.
 */
async function keysOf(owner: Caller): Promise<string[]> {
  return Promise.all(Array.from({ length: N }, async () => (await createApiKey(owner)).key));
}

describe("deletes of one record at the same moment", () => {
  it("a project: one 204, every other 404, and the one entry", async () => {
    const { owner } = await createOwnedProject();
    const keys = await keysOf(owner);
    for (let round = 0; round < ROUNDS; round++) {
      const project = await createProject(owner);
      const responses = await Promise.all(
        keys.map((key) => request("DELETE", `/v1/projects/${project.id}`, { key })),
      );
      expect(statuses(responses)).toEqual([204, ...Array(N - 1).fill(404)]);
      expect(await entriesOf("deleteProject", project.id)).toHaveLength(1);
    }
  });

  it("a variable: one 204, every other 404, and the one entry", async () => {
    const { owner, project } = await createOwnedProject();
    const keys = await keysOf(owner);
    for (let round = 0; round < ROUNDS; round++) {
      const variable = await createVariable(owner, environmentPath(project.default_environment_id));
      const responses = await Promise.all(
        keys.map((key) => request("DELETE", `/v1/variables/${variable.id}`, { key })),
      );
      expect(statuses(responses)).toEqual([204, ...Array(N - 1).fill(404)]);
      expect(await entriesOf("deleteVariable", variable.id)).toHaveLength(1);
    }
  });
});

describe("replaces of one record at the same moment: each entry's `from` is what its write replaced", () => {
  it("a project's name", async () => {
    const { owner, project } = await createOwnedProject();
    const names = Array.from({ length: N }, (_, i) => unique(`n${i}`));
    const responses = await Promise.all(
      names.map((name) =>
        request("PUT", `/v1/projects/${project.id}`, {
          key: owner.key,
          body: { name, default_environment_id: project.default_environment_id },
        }),
      ),
    );
    expect(statuses(responses)).toEqual(Array(N).fill(200));
    const stored = await request<{ name: string }>("GET", `/v1/projects/${project.id}`, { key: owner.key });
    const entries = await entriesOf("replaceProject", project.id);
    expect(entries).toHaveLength(N);
    expectChain(entries, "name", project.name, stored.body.name);
  });

  it("a variable's name", async () => {
    const { owner, project } = await createOwnedProject();
    const variable = await createVariable(owner, environmentPath(project.default_environment_id));
    const names = Array.from({ length: N }, (_, i) => `V${i}_${Date.now().toString(36)}`.toUpperCase());
    const responses = await Promise.all(
      names.map((name) =>
        request("PUT", `/v1/variables/${variable.id}`, {
          key: owner.key,
          body: { name, type: "secret", value: "v" },
        }),
      ),
    );
    expect(statuses(responses)).toEqual(Array(N).fill(200));
    const stored = await request<{ name: string }>("GET", `/v1/variables/${variable.id}`, { key: owner.key });
    const entries = await entriesOf("replaceVariable", variable.id);
    expect(entries).toHaveLength(N);
    expectChain(entries, "name", variable.name, stored.body.name);
  });

  it("an integration's flags, each set by its own update: all apply, and each entry is its own answer", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id, { configuration: {} });
    const flags = Object.keys(ALL_OFF);
    const responses = await Promise.all(
      flags.map((flag, i) =>
        request<Integration>("PATCH", one(project.id, integration.id), {
          key: owner.key,
          body: { configuration: { [flag]: true } },
          headers: { "x-request-id": `flags-${integration.id}-${i}` },
        }),
      ),
    );
    expect(statuses(responses)).toEqual(Array(flags.length).fill(200));
    const stored = await request<Integration>("GET", one(project.id, integration.id), { key: owner.key });
    const allOn = Object.fromEntries(flags.map((flag) => [flag, true]));
    expect(stored.body.configuration).toEqual(allOn);
    const entries = await entriesOf("updateIntegration", integration.id);
    expect(entries).toHaveLength(flags.length);
    for (const [i, res] of responses.entries()) {
      const entry = entries.find((e) => e.requestId === `flags-${integration.id}-${i}`);
      expect(entry?.changes?.configuration?.to).toEqual(res.body.configuration);
    }
    expectChain(entries, "configuration", ALL_OFF, allOn);
  });
});

describe("rotations of one signing secret at the same moment", () => {
  it("each entry's `from` is the update time the rotation replaced: only the first replaced the original", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await createPublicIntegration(owner, project.id);
    await sleep(5); // no rotation within its create's millisecond
    const responses = await Promise.all(
      Array.from({ length: N }, () =>
        request<{ signing_secret: string }>("POST", `${one(project.id, integration.id)}/rotate-secret`, {
          key: owner.key,
        }),
      ),
    );
    expect(statuses(responses)).toEqual(Array(N).fill(200));
    const entries = await entriesOf("rotateIntegrationSecret", integration.id);
    expect(entries).toHaveLength(N);
    const fromOriginal = entries.filter((e) => e.changes?.updated_at?.from === integration.updated_at);
    expect(fromOriginal).toHaveLength(1);
  });
});

describe("writeLatest's bounds", () => {
  const db = createDb(env.DB);
  const rowOf = async (id: string) => {
    const row = await db.select().from(projects).where(eq(projects.id, id)).get();
    if (!row) throw new Error("no project");
    return row;
  };
  const refusal = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    const { status, message, cause } = err as ApiError;
    return { status, message, cause };
  };

  it("a write that never lands is 409 once it has tried WRITE_ATTEMPTS times for WRITE_PATIENCE_MS, each against the record read anew", async () => {
    const { project } = await createOwnedProject();
    const read = await rowOf(project.id);
    let attempts = 0;
    const started = Date.now();
    const refused = await refusal(
      writeLatest(db, projects, read, async () => void attempts++, { guard: null, what: "Project" }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(WRITE_PATIENCE_MS);
    expect(attempts).toBeGreaterThan(WRITE_ATTEMPTS);
    expect(refused.status).toBe(409);
    expect(refused.message).toMatch(/kept changing/);
  });

  it("a write that loses more than WRITE_ATTEMPTS races in quick succession still lands", async () => {
    const { project } = await createOwnedProject();
    const read = await rowOf(project.id);
    let attempts = 0;
    const landed = await writeLatest(
      db,
      projects,
      read,
      async () => (++attempts > WRITE_ATTEMPTS + 8 ? "landed" : undefined),
      { guard: null, what: "Project" },
    );
    expect(landed).toBe("landed");
    expect(attempts).toBe(WRITE_ATTEMPTS + 9);
  });

  it("under If-Match a miss on a record whose ETag changed is 409 header.if-match; a record gone is 404", async () => {
    const { owner, project } = await createOwnedProject();
    const read = await rowOf(project.id);
    let attempts = 0;
    const guarded = await refusal(
      writeLatest(db, projects, read, async () => void attempts++, {
        guard: async () => false,
        what: "Project",
      }),
    );
    expect(attempts).toBe(1);
    expect(guarded.status).toBe(409);
    expect(guarded.cause).toEqual([{ path: "header.if-match", message: expect.any(String) }]);
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    const gone = await refusal(
      writeLatest(db, projects, read, async () => undefined, { guard: null, what: "Project" }),
    );
    expect(gone.status).toBe(404);
  });

  /**
   * The delivery consumer moves an integration's `failing_since` (a column its record does not
   * show) between an update's read and its write: the row changed, its ETag did not, so the
   * version the client named is still current and the update applies. A change of the record
   * itself in the same window is still 409.
   */
  describe("under If-Match, a row that changed without its record changing", () => {
    const setup = async () => {
      const { owner, project } = await createOwnedProject();
      const integration = await createPublicIntegration(owner, project.id);
      const rowOfIntegration = async () => {
        const row = await db
          .select()
          .from(notificationIntegrations)
          .where(eq(notificationIntegrations.id, integration.id))
          .get();
        if (!row) throw new Error("no integration");
        return row;
      };
      const read = await rowOfIntegration();
      const ctx = { ifMatch: [await recordEtag(toIntegrationRecord(read))] } as ServiceContext;
      const guard = await ifMatchGuard(ctx, read, toIntegrationRecord);
      let attempts = 0;
      /** The update as the service makes it: the new URL, on the row exactly as read. */
      const write = async (current: typeof read) => {
        attempts++;
        const [row] = await db
          .update(notificationIntegrations)
          .set({ url: `${integration.url}?moved` })
          .where(
            and(
              eq(notificationIntegrations.id, integration.id),
              unchangedSince(notificationIntegrations, current),
            ),
          )
          .returning();
        return row;
      };
      const meanwhile = (set: Partial<typeof read>) =>
        db.update(notificationIntegrations).set(set).where(eq(notificationIntegrations.id, integration.id));
      return { read, guard, write, meanwhile, attempts: () => attempts, rowOfIntegration };
    };

    it("its failing_since moved: the update applies, against the row read again", async () => {
      const { read, guard, write, meanwhile, attempts } = await setup();
      expect(guard).not.toBeNull();
      await meanwhile({ failingSince: new Date().toISOString() });
      const written = await writeLatest(db, notificationIntegrations, read, write, {
        guard,
        what: "Integration",
      });
      expect(attempts()).toBe(2);
      expect(written.url).toMatch(/\?moved$/);
      expect(written.failingSince).not.toBeNull();
    });

    it("its URL changed: 409 header.if-match, and nothing written", async () => {
      const { read, guard, write, meanwhile, attempts, rowOfIntegration } = await setup();
      await meanwhile({ url: `${read.url}?other` });
      const refused = await refusal(
        writeLatest(db, notificationIntegrations, read, write, { guard, what: "Integration" }),
      );
      expect(attempts()).toBe(1);
      expect(refused.status).toBe(409);
      expect(refused.cause).toEqual([{ path: "header.if-match", message: expect.any(String) }]);
      expect((await rowOfIntegration()).url).toMatch(/\?other$/);
    });
  });
});
