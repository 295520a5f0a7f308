// The webhook probes of bench/scenarios.mjs: a receiver in this process, the API's real local queue
// and consumer (wrangler.toml's batches of 10, 1 s timeout), real HTTP deliveries to 127.0.0.1.
import { createServer } from "node:http";
import { env, internal, median, newProject } from "./lib.mjs";

const [FANOUT, VOLUME] = [env("FANOUT", 50), env("VOLUME", 1000)];

export const WEBHOOKS = [
  {
    name: `webhook fan-out (one event → ${FANOUT} integrations)`,
    setup: async (c) => {
      const { id } = await newProject(c.server, c.seed.bench.keys[0], "h");
      for (let i = 0; i < FANOUT; i++) await integrate(c, id, `fan${i}`);
      return { project: id };
    },
    probe: async (c) => {
      const start = performance.now();
      const { id } = await emit(c, c.data.project);
      const accepted = performance.now() - start;
      const got = () =>
        Array.from({ length: FANOUT }, (_, i) => arrivals.get(`fan${i}`)?.find((a) => a.id === id));
      const last = (await until(() => got().every(Boolean))) - start;
      const times = got().map((a) => a.at - start);
      return {
        "accepted ms": accepted,
        "median delivery ms": median(times),
        "last delivery ms": last,
        "deliveries/s": (1000 * FANOUT) / last,
      };
    },
  },
  {
    only: true,
    // VOLUME events to one integration; then their deliveries to a second one, recovered in one call.
    name: `webhook volume (${VOLUME} events)`,
    probe: async (c) => {
      const key = c.seed.bench.keys[0];
      const project = (await newProject(c.server, key, "h")).id;
      const [vol, drain] = [`vol-${project}`, `drain-${project}`];
      await integrate(c, project, vol);
      // Disabled meanwhile: each event's delivery to it is recorded `skipped`, for the recovery.
      const path = `/v1/projects/${project}/notification-integrations/${(await integrate(c, project, drain)).id}`;
      await c.server.json("PATCH", path, { key, body: { enabled: false } });
      const [ids, since, start] = [new Set(), new Date(Date.now() - 60_000).toISOString(), performance.now()];
      const sender = async () => {
        while (ids.size < VOLUME) ids.add((await emit(c, project)).id);
      };
      await Promise.all(Array.from({ length: env("EMIT_CONCURRENCY", 5) }, sender));
      const accepted = performance.now() - start;
      const all = (bucket) => () => new Set(arrivals.get(bucket)?.map((a) => a.id)).size >= ids.size;
      const delivered = (await until(all(vol))) - start;
      await c.server.json("PATCH", path, { key, body: { enabled: true } });
      const recoverStart = performance.now();
      await c.server.json("POST", `${path}/recover`, { key, body: { since } });
      const recovered = (await until(all(drain))) - recoverStart;
      const repeats = (b) => arrivals.get(b).length - new Set(arrivals.get(b).map((a) => a.id)).size;
      return {
        "events accepted /s": (1000 * ids.size) / accepted,
        "deliveries /s, end to end": (1000 * ids.size) / delivered,
        "recovered deliveries /s (recover → the lane alone)": (1000 * ids.size) / recovered,
        "duplicate deliveries": repeats(vol) + repeats(drain),
      };
    },
  },
];

/** What the receiver got: bucket (POST /hooks/<bucket>) → [{ at, id: webhook-id }]. */
const arrivals = new Map();
let wake = () => {};
let port;
async function integrate(c, project, bucket) {
  port ??= await new Promise((resolve) => {
    const server = createServer((req, res) => {
      const list = arrivals.get(req.url.split("/")[2]) ?? [];
      arrivals.set(req.url.split("/")[2], list);
      req.resume().on("end", () => {
        list.push({ at: performance.now(), id: req.headers["webhook-id"] });
        res.end("ok");
        wake();
      });
    });
    server.unref().listen(0, "127.0.0.1", () => resolve(server.address().port));
  });
  const url = `http://127.0.0.1:${port}/hooks/${bucket}`;
  const body = { type: "webhook", url, configuration: { changelog: true } };
  return internal(c.server, "POST", `/projects/${project}/notification-integrations`, body);
}
/** One event through the internal API; a connection the dev proxy drops under load is tried again. */
async function emit(c, project) {
  const body = { type: "changelog.created", data: { title: "bench" } };
  for (let attempt = 1; ; attempt++) {
    try {
      return await internal(c.server, "POST", `/projects/${project}/events`, body);
    } catch (err) {
      if (attempt >= 3 || !/fetch failed|→ 503/.test(err.message)) throw err;
    }
  }
}
/** performance.now() once `done()` holds, checked after every arrival; fails after 5 minutes. */
function until(done) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("deliveries did not all arrive in 5 minutes")), 300_000);
    wake = () => {
      if (!done()) return;
      clearTimeout(timer);
      wake = () => {};
      resolve(performance.now());
    };
    wake();
  });
}
