/**
 * A lane's recorder of its attempts' outcomes (src/services/integrations/outcomes.ts). A lane
 * (./object.ts) makes up to MAX_IN_FLIGHT attempts at once; their outcomes are group-committed:
 * the first outcome goes at once, in its own attempt's session, and the outcomes that end while a
 * batch is out go together in the next one, run by the first of them. So a lane whose attempts
 * end one at a time writes as before (one batch each, nothing waits), and one whose attempts end
 * together (a backlog, a receiver that answers a burst at once) makes one round trip on the
 * primary per group instead of one per attempt. An outcome waits at most for the batch before it,
 * so the window in which an attempt was made and not yet recorded grows by one round trip at most.
 *
 * A group's batch is one transaction; should it fail, each of its outcomes is recorded alone, so
 * one that cannot be written does not take the others with it. Groups never span databases.
 */

import type { ServiceContext } from "../context";
import {
  type OutcomeStatement,
  type OutcomeWrite,
  type Recorded,
  type Recorder,
  recordAlone,
} from "../services/integrations/outcomes";

type Waiting = { ctx: ServiceContext; write: OutcomeWrite; done(r: Recorded): void; fail(e: unknown): void };

/** A recorder that group-commits the outcomes given to it, per database (one per lane). */
export function groupCommit(): Recorder {
  const queues = new Map<string, Waiting[]>();
  const run = async (database: string, group: Waiting[]) => {
    const [lead] = group as [Waiting, ...Waiting[]];
    const { db } = lead.ctx;
    try {
      const built = group.map((w) => w.write(db));
      const results = (await db.batch(
        built.flat() as [OutcomeStatement, ...OutcomeStatement[]],
      )) as D1Result[];
      const bookmark = lead.ctx.session.bookmark();
      let at = 0;
      for (const [i, w] of group.entries()) {
        const count = built[i]?.length ?? 0;
        w.done({ results: results.slice(at, at + count), bookmark });
        at += count;
      }
    } catch (err) {
      if (group.length === 1) lead.fail(err);
      else for (const w of group) await recordAlone(w.ctx, w.write).then(w.done, w.fail);
    }
    const next = queues.get(database) ?? [];
    if (next.length) {
      queues.set(database, []);
      await run(database, next);
    } else queues.delete(database);
  };
  return (ctx, write) =>
    new Promise<Recorded>((done, fail) => {
      const waiting = { ctx, write, done, fail };
      const queue = queues.get(ctx.database);
      if (queue) queue.push(waiting);
      else {
        queues.set(ctx.database, []);
        void run(ctx.database, [waiting]);
      }
    });
}
