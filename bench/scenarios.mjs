// The named scenarios of `npm run bench` (bench/run.mjs), in the order a block runs them. Adding a
// measurement is adding an entry here. Every round runs each server's block: its load scenarios
// (SLICE s of autocannon each, the order turned every round), then its probes, once each.
//
//   load:  { name, on?: "api" (by default) | "ladder", path, id?, method?, each?(c) → { path?, body? }, keys?,
//            admin?, vs?: [id…] }: req/s, latency, the Worker process's CPU per request, and those
//          figures ÷ the same figures of the scenarios named in `vs` (by `id`: a rung, or any
//          other), paired by round.
//          `path` is a string whose {project} {env} {listed} {owner} (seeded ids) and {name}
//          (anything `setup` returned) are filled in. `keys: true` gives the scenario
//          a pool of seeded keys of its own, one per request in turn.
//   probe: { name, on?, probe(c) → { figure: number, … } }: any measurement of one round; each
//          figure is reported as its median (min–max) over the rounds.
//   either may have `setup(c)` (once, before the first round; its result is `c.data`) and
//   `only: true` (runs only when `--only` names it).
//
// `c` is { server (bench/lib.mjs), seed (bench/seed.mjs), admin (the API's ADMIN_TOKEN), keys, data }.
import { env, hex, sideBySide } from "./lib.mjs";
import { DEEP_ROWS } from "./seed.mjs";
import { WEBHOOKS } from "./webhooks.mjs";

/** Each request a new project (its name unique). */
const POST = { method: "POST", each: () => ({ body: { name: `b-${hex(6)}` } }) };
/** Each request a deployment still queued on that server (from the `from`th): one move to in_progress each. */
const transitions = (prefix, from, body) => {
  let i = from;
  return (c) => ({ path: prefix + c.seed.bench.deployments[i++ % c.seed.bench.deployments.length], body });
};
const rung = (id, name, path, more) => ({ on: "ladder", id, name: `ladder: ${name}`, path, ...more });
/** A rung of /write/<id>/: each request moves a deployment (from the `from`th) to in_progress. */
const transition = (id, name, from, ...vs) =>
  rung(id, name, `/write/${id}/x`, { method: "PATCH", each: transitions(`/write/${id}/`, from), vs });
const route = (name, path, vs, more) => ({ on: "api", name, path, keys: true, vs, ...more });
const MOVES = ["transition", "entry", "timeline"];
const FLOOR = "floor: the rung via hono + zod-openapi, in a D1 session";
const PAGES = (c) => ({
  "first page": { path: "/v1/projects?limit=20" },
  "deep page": { path: c.data.deep },
});
const [KEYED, READ, LIST] = [{ keys: true, vs: ["rung"] }, ["rung", "floor"], ["rung", "floor", "page"]];

export const SCENARIOS = [
  // The ladder (bench/ladder/worker.ts): the I/O of the API's requests, none of its code.
  rung("bare", "bare JSON", "/bare", { vs: ["rung"] }),
  rung("do", "one DO RPC", "/do", KEYED),
  rung("d1", "one D1 SELECT", "/d1?id={project}", { vs: ["rung"] }),
  rung("rung", "DO RPC + D1 SELECT (the rung)", "/do-d1?id={project}", { keys: true }),
  rung("page", "DO RPC + a D1 page of 20", "/do-d1-page", KEYED),
  rung("floor", FLOOR, "/floor/projects/{project}", KEYED),
  rung("write", "DO RPC + the 3-INSERT batch", "/write/project", { ...POST, keys: true }),
  transition("transition", "SELECT, UPDATE + INSERT batch, queue send", 0),
  transition("entry", "the transition + a timeline INSERT", 7_000, "transition"),
  transition("timeline", "the transition + a timeline INSERT + an object RPC", 14_000, "transition", "entry"),

  // The API's routes, each beside the rungs that do its I/O.
  route("GET /healthz", "/healthz", ["bare"], { keys: false }),
  route("GET /v1/projects/{id}", "/v1/projects/{project}", READ, { id: "read" }),
  route("GET /v1/projects?limit=20", "/v1/projects?limit=20", LIST),
  route("GET /v1/deployments?limit=20", "/v1/deployments?limit=20", LIST),
  route(
    "GET /v1/environments/{id}/deployments?limit=20",
    "/v1/environments/{env}/deployments?limit=20",
    LIST,
  ),
  route("GET /v1/projects/{id}/members?limit=20", "/v1/projects/{project}/members?limit=20", LIST),
  route("GET /v1/projects/{id}/members/{account_id}", "/v1/projects/{project}/members/{owner}", READ),
  route(
    "GET /v1/projects/{id}/notification-integrations",
    "/v1/projects/{listed}/notification-integrations",
    LIST,
  ),
  route("GET /v1/projects/{id}/events?limit=20", "/v1/projects/{listed}/events?limit=20", LIST),
  route("POST /v1/projects", "/v1/projects", ["write"], POST),
  route("PATCH /internal/v1/deployments/{id} → in_progress", "/internal/v1/deployments/x", MOVES, {
    method: "PATCH",
    admin: true,
    keys: false,
    each: transitions("/internal/v1/deployments/", 0, { status: "in_progress" }),
  }),

  {
    // The first page and the page after 10,000 rows, one request at a time, in turn (lib.sideBySide).
    name: "deep pages (limit 20)",
    setup: async (c) => {
      const key = c.seed.deep.keys[0];
      const path = (n, after) =>
        `/v1/projects?limit=${n}${after ? `&after=${encodeURIComponent(after)}` : ""}`;
      let after;
      for (let page = 0; page < 50; page++)
        after = (await c.server.json("GET", path(200, after), { key })).next_page;
      const deep = path(20, after);
      const first = (await c.server.json("GET", deep, { key })).data[0];
      if (first?.name !== `p${DEEP_ROWS - 10_001}`) throw new Error("not the page after 10,000 rows");
      return { deep };
    },
    probe: (c) => sideBySide(c, env("DEPTH_SAMPLES", 100), PAGES(c), c.seed.deep.keys[0]),
  },
  ...WEBHOOKS,
];
