// The API's entry when a run counts D1 queries (bench/lib.mjs `snapshot` with `countD1` writes the
// entry that uses this): every D1 statement and round trip (a batch is one) of the
// Worker and its Durable Objects is counted, as test/properties/query-count/ counts them,
// and `GET /__bench/d1` answers the counts so far. Locally the Worker and its objects share one
// isolate, so one counter sees them all.
const counts = { statements: 0, roundTrips: 0 };
const inner = new WeakMap();
const count = (run, statements = 1) => {
  counts.statements += statements;
  counts.roundTrips++;
  return run();
};
const wrapStatement = (stmt) => {
  const wrapped = { bind: (...values) => wrapStatement(stmt.bind(...values)) };
  for (const m of ["all", "raw", "run", "first"]) wrapped[m] = (...a) => count(() => stmt[m](...a));
  inner.set(wrapped, stmt);
  return wrapped;
};
const wrapClient = (client) => ({
  prepare: (query) => wrapStatement(client.prepare(query)),
  batch: (all) => count(() => client.batch(all.map((s) => inner.get(s) ?? s)), all.length),
});
const envs = new WeakMap();
/** `env` with its DB counted; the same object for the same `env`, so per-env caches still hit. */
export function counted(env) {
  if (!envs.has(env)) {
    const db = env.DB;
    const DB = {
      ...wrapClient(db),
      exec: (query) => count(() => db.exec(query)),
      withSession: (start) => {
        const session = db.withSession(start);
        return { ...wrapClient(session), getBookmark: () => session.getBookmark() };
      },
    };
    envs.set(env, { ...env, DB });
  }
  return envs.get(env);
}
export const withCount = (handler) => ({
  fetch: (request, env, ctx) =>
    new URL(request.url).pathname === "/__bench/d1"
      ? Response.json(counts)
      : handler.fetch(request, counted(env), ctx),
  queue: (batch, env, ctx) => handler.queue(batch, counted(env), ctx),
  scheduled: (controller, env, ctx) => handler.scheduled(controller, counted(env), ctx),
});
