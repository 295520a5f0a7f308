// Variable sets, deployment timelines and derived keys at size (API_CONTRACT §18, §19, §21), for
// bench/scenarios.mjs: each entry is named `§<section> …` and runs only when `--only` names it
// (`node bench/run.mjs --only=§`). A 500-name variable change and export beside a single create
// (§18), live streams held idle and told of a change (§19), a derived key's read beside a plain
// key's (§21), and growth: the ends of a 100,000-entry timeline and of a 5,000-version history
// (their pages, and restores of the oldest and newest version).
//
//   env: STREAMS (100) IDLE_SECONDS (20) ENTRIES (100,000) VERSIONS (5,000) GROWTH_SAMPLES (30)
import { env, hex, internal, newProject, percentile, sideBySide, sleep } from "./lib.mjs";

const [STREAMS, IDLE_SECONDS] = [env("STREAMS", 100), env("IDLE_SECONDS", 20)];
const [ENTRIES, VERSIONS] = [env("ENTRIES", 100_000), env("VERSIONS", 5_000)];
const SAMPLES = env("GROWTH_SAMPLES", 30);
const secret = () => ({ type: "secret", value: hex(16) });
const owner = (c) => c.seed.bench.keys[0];
const NAMES = Array.from({ length: 500 }, (_, i) => `VAR_${String(i).padStart(3, "0")}`);
const fiveHundred = () => ({ variables: Object.fromEntries(NAMES.map((n) => [n, secret()])) });

/** The environments of `n` new projects: scopes of variables that no other scenario writes. */
async function scopes(c, n) {
  const made = [];
  for (let i = 0; i < n; i++) made.push((await newProject(c, "v")).default_environment_id);
  return made;
}
/** Each request to the next of `c.data.scopes`' variables, with `body()`. */
const rotating = (body) => {
  let i = 0;
  return (c) => ({ path: variables(c.data.scopes[i++ % c.data.scopes.length]), body: body() });
};
const variables = (environment) => `/v1/environments/${environment}/variables`;
const logLine = (_, i) => ({ message: `step ${i}: ${hex(24)}` });
const inScopes = async (c) => ({ scopes: await scopes(c, 20) });
const DEPLOYMENT = { stack_ids: [], data: { patch: [] } };
const newDeployment = async (c, environment) =>
  (await internal(c, "POST", `/environments/${environment}/deployments`, DEPLOYMENT)).id;
const VARIABLES = variables("{env}");

/** `route` is bench/scenarios.mjs' helper; every entry runs only when `--only` names it. */
export const variablesTimelineKeys = ({ route }) =>
  [
    route("§18 POST /v1/environments/{id}/variables (one)", VARIABLES, ["write"], {
      id: "create",
      method: "POST",
      setup: inScopes,
      each: rotating(() => ({ name: `V_${hex()}`, ...secret() })),
    }),
    route("§18 PATCH /v1/environments/{id}/variables (500 names)", VARIABLES, ["create"], {
      method: "PATCH",
      setup: inScopes,
      each: rotating(fiveHundred),
    }),
    route("§18 GET /v1/environments/{id}/variables/export (500 names)", `${VARIABLES}/export`, ["create"], {
      setup: async (c) => {
        const [env] = await scopes(c, 1);
        await c.server.json("PATCH", variables(env), { key: owner(c), body: fiveHundred() });
        return { env };
      },
    }),
    route("§21 GET /v1/projects/{id}, a derived key", "/v1/projects/{project}", ["read"], {
      // 20 keys made by POST /v1/api-keys from 10 seeded keys (bench/run.mjs seeds 10 spare keys):
      // fields left out, so each can do what its parent can.
      setup: async (c) => {
        const parents = c.seed.bench.keys.slice(-10);
        const keys = [];
        for (let i = 0; i < 20; i++) {
          const body = { name: `derived-${i}` };
          keys.push((await c.server.json("POST", "/v1/api-keys", { key: parents[i % 10], body })).key);
        }
        return { keys };
      },
      keys: (c) => c.data.keys,
    }),
    {
      countD1: true,
      // A new deployment each round; STREAMS streams of it, held IDLE_SECONDS while it does not
      // change (the Worker held as long with no stream just before, beside it), then told of
      // `queued → in_progress` (the engine's report), then closed by its `succeeded`.
      name: `§19 ${STREAMS} live streams of a deployment`,
      setup: async (c) => ({ environment: (await scopes(c, 1))[0] }),
      probe: async (c) => {
        const id = await newDeployment(c, c.data.environment);
        const keys = c.seed.bench.keys.slice(-10);
        const without = await idle(c);
        const opening = await d1RoundTrips(c);
        const streams = await Promise.all(
          Array.from({ length: STREAMS }, (_, i) => follow(c, id, keys[i % keys.length])),
        );
        await Promise.all(streams.map((s) => s.seen(1)));
        const opened = (await d1RoundTrips(c)) - opening;
        const held = await idle(c);
        const start = performance.now();
        await internal(c, "PATCH", `/deployments/${id}`, { status: "in_progress" });
        const delays = (await Promise.all(streams.map((s) => s.seen(2)))).map((at) => at - start);
        await internal(c, "PATCH", `/deployments/${id}`, { status: "succeeded" });
        const ended = await Promise.all(streams.map((s) => s.ended));
        return {
          "D1 round trips opening the streams": opened,
          "D1 round trips while idle": held.roundTrips,
          "Worker CPU ms per idle s, streams open": held.cpuMs,
          "Worker CPU ms per idle s, no stream": without.cpuMs,
          "change → stream p50 ms": percentile(delays, 50),
          "change → stream p99 ms": percentile(delays, 99),
          "streams ended by `end`": ended.filter(Boolean).length,
        };
      },
    },
    {
      // The first page and the last (limit 100) of a timeline of ENTRIES entries, appended by the
      // engine's API 1,000 lines a request; one request at a time, in turn.
      name: `§19 a timeline of ${ENTRIES} entries, pages (limit 100)`,
      setup: async (c) => {
        const id = await newDeployment(c, (await scopes(c, 1))[0]);
        for (let left = ENTRIES - 1; left > 0; left -= 1000) {
          const lines = Array.from({ length: Math.min(1000, left) }, logLine);
          await internal(c, "POST", `/deployments/${id}/logs`, { lines });
        }
        const page = (after) => ({ path: `/v1/deployments/${id}/timeline?after_seq=${after}&limit=100` });
        const last = await c.server.json("GET", page(ENTRIES - 100).path, { key: owner(c) });
        if (last.data.at(-1)?.seq !== ENTRIES)
          throw new Error(`the timeline ends at ${last.data.at(-1)?.seq}`);
        return { first: page(0), last: page(ENTRIES - 100) };
      },
      probe: (c) => sideBySide(c, SAMPLES, { start: c.data.first, end: c.data.last }, owner(c)),
    },
    {
      // A scope changed VERSIONS times (the first change sets 20 names, each later one changes one
      // of them): the first and the last page of its versions (limit 20, newest first), and a dry-run
      // restore of its oldest version (1) and of its newest (the current one: every name unchanged).
      name: `§18 a scope of ${VERSIONS} versions`,
      setup: async (c) => {
        const [scope] = await scopes(c, 1);
        const path = variables(scope);
        const change = (names) => ({ variables: Object.fromEntries(names.map((n) => [n, secret()])) });
        await c.server.json("PATCH", path, { key: owner(c), body: change(NAMES.slice(0, 20)) });
        let made = 1;
        const writer = async () => {
          while (made < VERSIONS)
            await c.server.json("PATCH", path, { key: owner(c), body: change([NAMES[made++ % 20]]) });
        };
        await Promise.all(Array.from({ length: 3 }, writer));
        let last = `${path}/versions?limit=20`;
        for (let page = await c.server.json("GET", last, { key: owner(c) }); page.has_more; ) {
          last = `${path}/versions?limit=20&after=${encodeURIComponent(page.next_page)}`;
          page = await c.server.json("GET", last, { key: owner(c) });
          if (!page.has_more && page.data.at(-1)?.version !== 1)
            throw new Error("the last page ends not at 1");
        }
        const restore = (v) => ({
          method: "POST",
          path: `${path}/versions/${v}/restore`,
          body: { dry_run: true },
        });
        return {
          pages: { first: { path: `${path}/versions?limit=20` }, last: { path: last } },
          restores: { newest: restore(VERSIONS), oldest: restore(1) },
        };
      },
      probe: async (c) => ({
        ...(await sideBySide(c, SAMPLES, c.data.pages, owner(c))),
        ...(await sideBySide(c, SAMPLES, c.data.restores, owner(c))),
      }),
    },
  ].map((s) => ({ ...s, only: true }));

/** IDLE_SECONDS of the API left alone: D1 round trips (bench/count-d1.mjs) and Worker CPU ms per s. */
async function idle(c) {
  await c.server.quiet();
  const [before, cpu] = [await d1RoundTrips(c), c.server.cpuNs()];
  await sleep(IDLE_SECONDS * 1000);
  const cpuMs = (c.server.cpuNs() - cpu) / 1e6 / IDLE_SECONDS;
  return { roundTrips: (await d1RoundTrips(c)) - before, cpuMs };
}
const d1RoundTrips = async (c) => (await c.server.json("GET", "/__bench/d1")).roundTrips;

/** A live stream of deployment `id`: `seen(seq)` resolves to when entry `seq` arrived; `ended` to
 * whether `event: end` came before the stream closed. */
async function follow(c, id, key) {
  const headers = { accept: "text/event-stream", "x-api-key": key };
  const res = await fetch(`${c.server.base}/v1/deployments/${id}/timeline`, { headers });
  if (res.status !== 200) throw new Error(`stream → ${res.status}`);
  const [arrived, decoder] = [new Map(), new TextDecoder()];
  let [text, end] = ["", false];
  const ended = (async () => {
    for await (const chunk of res.body) {
      const at = performance.now();
      text += decoder.decode(chunk, { stream: true });
      for (let i = text.indexOf("\n\n"); i >= 0; i = text.indexOf("\n\n")) {
        const event = text.slice(0, i);
        text = text.slice(i + 2);
        const seq = /^id: (\d+)$/m.exec(event)?.[1];
        if (seq) arrived.set(Number(seq), at);
        if (/^event: end$/m.test(event)) end = true;
      }
    }
    return end;
  })();
  const seen = async (seq) => {
    for (const until = Date.now() + 30_000; !arrived.has(seq); await sleep(10))
      if (Date.now() > until) throw new Error(`entry ${seq} did not arrive in 30 s`);
    return arrived.get(seq);
  };
  return { seen, ended };
}
