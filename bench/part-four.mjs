// Part four's costs (API_CONTRACT §23–§28), for bench/scenarios.mjs: each entry is named `§2<n> …`
// and runs only when `--only` names it (`node bench/run.mjs --only='§2[3-8]'`). Every figure is a
// ratio to something the API already did before part four, measured side by side in the same run:
//
//   - an environment read beside a project read (load);
//   - a public deployment create, a promotion and a gated create (an environment whose protection
//     requires one approval) beside a redeploy (load; none of their environments holds variables, so
//     each records the same configuration);
//   - a configuration read and a diff (against `current`, every name changed) of a 500-name scope
//     beside that scope's export (probe);
//   - the configuration read of a deployment whose three scopes have 500 versions each (every
//     version rewrites all 20 names) beside one whose scopes have 1 (probe);
//   - a promotion plan (`dry_run`) over scopes of 500 names beside one over 10 (probe; the target's
//     names all differ from the original's, so every name is `missing` or `extra`);
//   - an OpenID Connect exchange whose issuer keys the isolate holds beside a §21 key create (probe;
//     the issuer is a server in this process, the API runs with ALLOW_INSECURE_OIDC_ISSUERS);
//   - an MCP `tools/call` of a read (`get_environment`: the environment and its protection, two
//     /v1 reads) beside the same two reads over REST, one after the other (probe).
//
// Probes send one request at a time, the two kinds in turn (`sideBySide`), each kind once first so
// that a round's new process has built its operations (and fetched the issuer's keys).
//
//   env: PART_FOUR_SAMPLES (30) HISTORY (500: versions of each scope for the config read)
import { createServer } from "node:http";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { env, hex, internal, median, newProject, pairedRatio, sideBySide } from "./lib.mjs";

const SAMPLES = env("PART_FOUR_SAMPLES", 30);
const HISTORY = env("HISTORY", 500);
const owner = (c) => c.seed.bench.keys[0];
const names = (n, prefix = "VAR") =>
  Array.from({ length: n }, (_, i) => `${prefix}_${String(i).padStart(3, "0")}`);
const secrets = (list) => ({
  variables: Object.fromEntries(list.map((n) => [n, { type: "secret", value: hex(16) }])),
});
const TEMPLATES = ["tpl-web", "tpl-worker"];

/** A new project's default environment with a stack of each template (and `components` by name). */
async function environment(c, { components = [] } = {}) {
  const project = await newProject(c, "p4");
  const id = project.default_environment_id;
  await withStacks(c, id);
  const made = [];
  for (const name of components)
    made.push((await internal(c, "POST", `/environments/${id}/components`, { name })).id);
  return { project: project.id, id, components: made };
}
const withStacks = async (c, id) => {
  for (const template_id of TEMPLATES)
    await internal(c, "POST", `/environments/${id}/stacks`, { name: template_id, template_id });
};
/** Another environment of `project`, with the same stacks' templates. */
async function sibling(c, project) {
  const body = { name: `target-${hex(4)}` };
  const { id } = await c.server.json("POST", `/v1/projects/${project}/environments`, { key: owner(c), body });
  await withStacks(c, id);
  return id;
}
const change = (c, path, body) => c.server.json("PATCH", path, { key: owner(c), body });
/** A deployment of every stack of `environment`, created by the API (so it records a config). */
const deploy = (c, environment) =>
  c.server.json("POST", `/v1/environments/${environment}/deployments`, {
    key: owner(c),
    body: { data: { patch: [] } },
  });
/** The same, moved by the engine to `succeeded`. */
async function succeeded(c, environment) {
  const { id } = await deploy(c, environment);
  await internal(c, "PATCH", `/deployments/${id}`, { status: "in_progress" });
  await internal(c, "PATCH", `/deployments/${id}`, { status: "succeeded" });
  return id;
}
/** Each kind of request once (a new process builds its operations), then `sideBySide`. */
async function inTurn(c, requests) {
  for (const { method = "GET", path, body, key = owner(c), headers } of Object.values(requests))
    await c.server.request(method, path, { key, body: typeof body === "function" ? body() : body, headers });
  return sideBySide(c, SAMPLES, requests, owner(c));
}

/** An OpenID Connect issuer in this process: its discovery document and its one ES256 key. */
async function issuer() {
  const { publicKey, privateKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid: "bench", alg: "ES256", use: "sig" };
  const server = createServer((req, res) => {
    const body =
      req.url === "/.well-known/openid-configuration"
        ? { issuer: origin, jwks_uri: `${origin}/jwks` }
        : req.url === "/jwks"
          ? { keys: [jwk] }
          : null;
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? {}));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const origin = `http://127.0.0.1:${server.address().port}`;
  const token = () => {
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: "repo:bench/api:ref:refs/heads/main", repository: "bench/api", jti: hex(16) };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid: "bench", typ: "JWT" })
      .setIssuer(origin)
      .setAudience("deploy-platform")
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
  };
  return { origin, token };
}

/** `route` is bench/scenarios.mjs' helper; every entry runs only when `--only` names it. */
export const partFour = ({ route }) =>
  [
    route("§23 GET /v1/environments/{id}", "/v1/environments/{env}", ["read"]),
    route("§20 POST /v1/deployments/{id}/redeploy", "/v1/deployments/{original}/redeploy", [], {
      id: "redeploy",
      method: "POST",
      setup: async (c) => ({ original: (await deploy(c, (await environment(c)).id)).id }),
      each: () => ({ body: {} }),
    }),
    route(
      "§23 POST /v1/environments/{id}/deployments",
      "/v1/environments/{target}/deployments",
      ["redeploy"],
      {
        method: "POST",
        setup: async (c) => ({ target: (await environment(c)).id }),
        each: () => ({ body: { data: { patch: [] } } }),
      },
    ),
    route("§25 POST /v1/deployments/{id}/promote", "/v1/deployments/{source}/promote", ["redeploy"], {
      method: "POST",
      setup: async (c) => {
        const from = await environment(c);
        const target = await sibling(c, from.project);
        return { source: await succeeded(c, from.id), target };
      },
      each: (c) => ({ body: { environment_id: c.data.target } }),
    }),
    route(
      "§26 POST /v1/environments/{id}/deployments, 1 approval required",
      "/v1/environments/{gated}/deployments",
      ["redeploy"],
      {
        method: "POST",
        setup: async (c) => {
          const { id } = await environment(c);
          const body = {
            required_approvals: 1,
            reviewer_role: "owner",
            prevent_self_review: true,
            wait_timer: 0,
            concurrency: "parallel",
          };
          await c.server.json("PUT", `/v1/environments/${id}/protection`, { key: owner(c), body });
          const first = await deploy(c, id);
          if (first.status !== "waiting") throw new Error(`a gated create is ${first.status}`);
          return { gated: id };
        },
        each: () => ({ body: { data: { patch: [] } } }),
      },
    ),
    {
      // A scope of 500 secrets, a deployment pinning it, then every name written again.
      name: "§24 config read and diff, 500 names, beside the export",
      setup: async (c) => {
        const { id } = await environment(c);
        const path = `/v1/environments/${id}/variables`;
        await change(c, path, secrets(names(500)));
        const deployment = (await deploy(c, id)).id;
        await change(c, path, secrets(names(500)));
        const diff = await c.server.json("GET", `/v1/deployments/${deployment}/config/diff`, {
          key: owner(c),
        });
        if (diff.changes.length !== 500) throw new Error(`the diff has ${diff.changes.length} changes`);
        return {
          export: { path: `${path}/export` },
          config: { path: `/v1/deployments/${deployment}/config` },
          diff: { path: `/v1/deployments/${deployment}/config/diff` },
        };
      },
      probe: async (c) => ({
        ...(await inTurn(c, { export: c.data.export, config: c.data.config })),
        ...(await inTurn(c, { export: c.data.export, diff: c.data.diff })),
      }),
    },
    {
      // Two environments of three scopes (their own, two components'), 20 names each: in one every
      // scope changed once, in the other HISTORY times (each change writing all 20 names); then a
      // deployment of each, pinning the scopes' latest versions.
      name: `§24 config read, scopes of ${HISTORY} versions beside 1`,
      setup: async (c) => {
        const scopes = async (versions) => {
          const e = await environment(c, { components: ["api", "web"] });
          const paths = [e.id, ...e.components].map((id, i) =>
            i === 0 ? `/v1/environments/${id}/variables` : `/v1/components/${id}/variables`,
          );
          for (const path of paths) {
            let left = versions;
            const writer = async () => {
              while (left-- > 0) await change(c, path, secrets(names(20)));
            };
            await Promise.all(Array.from({ length: 3 }, writer));
          }
          const { id, config } = await deploy(c, e.id);
          if (config.environment_version !== versions)
            throw new Error(`pinned at ${config.environment_version}`);
          return { path: `/v1/deployments/${id}/config` };
        };
        return { "1 version": await scopes(1), [`${HISTORY} versions`]: await scopes(HISTORY) };
      },
      probe: (c) => inTurn(c, c.data),
    },
    {
      // An original (succeeded) whose environment scope holds n names, a target whose scope holds n
      // others; the plan lists all 2n.
      name: "§25 promotion plan (dry_run), 500 names beside 10",
      setup: async (c) => {
        const plan = async (n) => {
          const from = await environment(c);
          const target = await sibling(c, from.project);
          await change(c, `/v1/environments/${from.id}/variables`, secrets(names(n, "FROM")));
          await change(c, `/v1/environments/${target}/variables`, secrets(names(n, "TO")));
          const body = { environment_id: target, dry_run: true };
          const path = `/v1/deployments/${await succeeded(c, from.id)}/promote`;
          const answer = await c.server.json("POST", path, { key: owner(c), body });
          if (answer.variables[0]?.missing.length !== n) throw new Error("the plan misses names");
          return { method: "POST", path, body };
        };
        return { "10 names": await plan(10), "500 names": await plan(500) };
      },
      probe: (c) => inTurn(c, c.data),
    },
    {
      // A trust of an issuer in this process; each exchange a new token (a `jti` is exchanged once).
      name: "§27 POST /v1/oidc/token, keys cached, beside POST /v1/api-keys",
      setup: async (c) => {
        const { origin, token } = await issuer();
        const body = {
          name: "bench",
          issuer: origin,
          audience: "deploy-platform",
          conditions: { repository: "bench/api" },
        };
        const trust = await c.server.json("POST", "/v1/oidc-trusts", { key: owner(c), body });
        return { trust: trust.id, token };
      },
      probe: async (c) => {
        const tokens = [];
        const exchange = {
          method: "POST",
          path: "/v1/oidc/token",
          key: null,
          body: () => ({ trust_id: c.data.trust, token: tokens.pop() }),
        };
        // Signed ahead (the signing is this process's work, not the Worker's).
        for (let i = 0; i <= SAMPLES; i++) tokens.push(await c.data.token());
        const create = { method: "POST", path: "/v1/api-keys", body: () => ({ name: `k-${hex(4)}` }) };
        return inTurn(c, { "key create": create, exchange });
      },
    },
    {
      // One stateless MCP request (the server keeps no session): tools/call of get_environment, which
      // reads the environment and its protection through the API in-process. Beside it the same two
      // reads as a client sends them over REST, one after the other (their CPU summed).
      name: "§28 MCP tools/call get_environment, beside its two REST reads",
      setup: async (c) => ({ environment: (await environment(c)).id }),
      probe: async (c) => {
        const id = c.data.environment;
        const call = {
          method: "POST",
          path: "/mcp",
          headers: { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
          body: {
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "get_environment", arguments: { environment_id: id } },
          },
        };
        const answer = await c.server.json(call.method, call.path, { key: owner(c), ...call });
        if (answer.result?.structuredContent?.environment?.id !== id)
          throw new Error(`tools/call answered ${JSON.stringify(answer).slice(0, 200)}`);
        const rest = {
          environment: { path: `/v1/environments/${id}` },
          protection: { path: `/v1/environments/${id}/protection` },
        };
        await inTurn(c, rest);
        const samples = { rest: [[], []], mcp: [[], []] };
        for (let i = 0; i < SAMPLES; i++) {
          for (const kind of i % 2 ? ["mcp", "rest"] : ["rest", "mcp"]) {
            const before = c.server.cpuNs();
            let ms = 0;
            if (kind === "mcp") ms = (await c.server.request("POST", "/mcp", { key: owner(c), ...call })).ms;
            else
              for (const r of Object.values(rest))
                ms += (await c.server.request("GET", r.path, { key: owner(c) })).ms;
            samples[kind][0].push(ms);
            samples[kind][1].push((c.server.cpuNs() - before) / 1e6);
          }
        }
        const figures = {};
        for (const kind of ["rest", "mcp"]) {
          figures[`${kind} p50 ms`] = median(samples[kind][0]);
          figures[`${kind} CPU ms`] = median(samples[kind][1]);
        }
        figures["mcp ÷ rest: ms"] = pairedRatio(samples.mcp[0], samples.rest[0]);
        figures["mcp ÷ rest: CPU"] = pairedRatio(samples.mcp[1], samples.rest[1]);
        return figures;
      },
    },
  ].map((s) => ({ ...s, only: true }));
