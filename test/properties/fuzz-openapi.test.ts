/**
 * Property-based fuzzing of every operation the Worker publishes in /openapi.json (issue #10).
 *
 * The list of operations is read from the running Worker's document, never written down here,
 * so a new operation is fuzzed without anyone remembering to add it. For each operation,
 * fast-check generates requests that are each malformed in one way that the operation's own
 * description makes refusable: a path ID that fits no identifier form, a body with an unknown
 * field, a field of the wrong type, a required field left out, JSON nested past 64 levels, an
 * unpaired UTF-16 surrogate, a body that is not a JSON object, a wrong `content-type` or
 * charset, a body on an operation that takes none, and `limit` / `after` / `sort_by` /
 * enum-filter values out of bounds. Every answer must be:
 *
 * - a refusal, never a 5xx (and never 429: the test configuration raises every rate limit);
 * - exactly `{code, message, cause?}`, `code` one of the ten, matching the HTTP status;
 * - free of side effects: every D1 row the caller's organization can reach (its projects and
 *   everything under them, its members and keys, organizations the caller belongs to) is the
 *   same before and after.
 *
 * `npm test` runs a few cases per operation with a fixed seed (a few seconds in all). For a
 * longer local run: `FUZZ_RUNS=300 npx vitest run test/properties/fuzz-openapi.test.ts`, optionally with
 * `FUZZ_SEED=<n>` (a failure prints the seed and path to replay it). The generators of malformed
 * requests are in test/helpers/fuzz.ts.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../src/errors";
import { request } from "../helpers/api";
import {
  createComponent,
  createDeployment,
  createIntegration,
  createOrgWithOwner,
  createProject,
  createResource,
  createStack,
} from "../helpers/factories";
import { aimAt, fillPath, generators, takesNoInput } from "../helpers/fuzz";
import { openApiDocument, operations } from "../helpers/openapi";

const RUNS = Number(env.FUZZ_RUNS) > 0 ? Number(env.FUZZ_RUNS) : 4;
const SEED = Number(env.FUZZ_SEED) || 20261122;

// ---------------------------------------------------------------------------------------
// The world the fuzzer aims at: one organization with one of everything.

type World = { orgId: string; accountId: string; key: string; ids: Record<string, string> };
let world: World;

beforeAll(async () => {
  const { org, owner } = await createOrgWithOwner();
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const component = await createComponent(environmentId);
  const stack = await createStack(environmentId, { template_id: "tpl-fuzz" });
  const resource = await createResource(stack.id, { resource_type: "AWS::SQS::Queue", physical_id: "q" });
  const deployment = await createDeployment(environmentId, [stack.id], {
    patch: [{ op: "add", path: "/a", value: 1 }],
  });
  const integration = await createIntegration(project.id, {
    url: "https://hooks.example.com/fuzz",
    configuration: { deployments_failed: true },
  });
  const variable = await request<{ id: string }>("POST", `/v1/environments/${environmentId}/variables`, {
    key: owner.key,
    body: { name: "FUZZ", type: "secret", value: "v" },
  });
  world = {
    key: owner.key,
    orgId: org.id,
    accountId: owner.accountId,
    // Path parameters by name, and `{id}` by the collection segment before it.
    ids: {
      org_id: org.id,
      project_id: project.id,
      projects: project.id,
      environment_id: environmentId,
      component_id: component.id,
      stack_id: stack.id,
      member_id: owner.accountId,
      integration_id: integration.id,
      variable_id: variable.body.id,
      variables: variable.body.id,
      version: "1",
      resources: resource.id,
      deployments: deployment.id,
      "api-keys": owner.keyId,
    },
  };
});

// ---------------------------------------------------------------------------------------
// What a refused request must not have changed.

const PROJECT_TABLES = [
  "project_members",
  "environments",
  "components",
  "stacks",
  "stack_resources",
  "deployments",
  "variables",
  "notification_integrations",
  "events",
  "webhook_deliveries",
  "variable_versions",
  "variable_version_values",
];
const OUR_PROJECTS = "project_id IN (SELECT id FROM projects WHERE org_id = ?1)";
/** Each table, the rows of it the organization (`?1`) and its owner account (`?2`) can reach. */
const SCOPES: Array<[string, string]> = [
  ["organizations", "id IN (SELECT org_id FROM org_members WHERE account_id = ?2) AND ?1 IS NOT NULL"],
  ["org_members", "org_id = ?1 OR account_id = ?2"],
  // Less the keys this file makes for itself as it goes (the public API cannot make keys).
  ["api_keys", "org_id = ?1 AND ?2 IS NOT NULL AND coalesce(name, '') NOT LIKE 'fuzz-%'"],
  ["projects", "org_id = ?1 AND ?2 IS NOT NULL"],
  ...PROJECT_TABLES.map((t): [string, string] => [t, `${OUR_PROJECTS} AND ?2 IS NOT NULL`]),
  [
    "deployment_stacks",
    `deployment_id IN (SELECT id FROM deployments WHERE ${OUR_PROJECTS}) AND ?2 IS NOT NULL`,
  ],
  [
    "deployment_timeline",
    `deployment_id IN (SELECT id FROM deployments WHERE ${OUR_PROJECTS}) AND ?2 IS NOT NULL`,
  ],
];
/** Written by every request (key use) or by the queue in the background, not by the request's own effect. */
const VOLATILE = new Set(["last_used_at", "enqueued_at"]);

async function snapshot(): Promise<string> {
  const results = await env.DB.batch(
    SCOPES.map(([table, where]) =>
      env.DB.prepare(`SELECT * FROM ${table} WHERE ${where} ORDER BY rowid`).bind(
        world.orgId,
        world.accountId,
      ),
    ),
  );
  return JSON.stringify(
    results.map((r, i) => [
      SCOPES[i]?.[0],
      (r.results as Record<string, unknown>[]).map((row) =>
        Object.fromEntries(Object.entries(row).filter(([column]) => !VOLATILE.has(column))),
      ),
    ]),
  );
}

// ---------------------------------------------------------------------------------------

const ERROR_KEYS = new Set(["code", "message", "cause"]);

describe("fuzzing every published operation with malformed input", () => {
  it("covers every operation of /openapi.json, and the generators apply to each", async () => {
    aimAt({ doc: await openApiDocument(), ids: world.ids });
    const ops = await operations();
    expect(ops.length).toBeGreaterThan(20);
    for (const op of ops) {
      if (takesNoInput(op)) continue;
      expect(generators(op).length, `${op.method} ${op.path}`).toBeGreaterThan(0);
    }
    // Every operation takes at least the X-D1-Bookmark header, so every one has input to malform.
    expect(ops.filter(takesNoInput).map((op) => `${op.method} ${op.path}`)).toEqual([]);
  });

  it("an empty body where one is required is a bad_input naming what is missing, never a 5xx", async () => {
    aimAt({ doc: await openApiDocument(), ids: world.ids });
    const ops = (await operations()).filter((op) => {
      const body = op.operation.requestBody;
      const schema = body?.content?.["application/json"]?.schema as { $ref?: string } | undefined;
      return body?.required && schema !== undefined;
    });
    expect(ops.length).toBeGreaterThan(8);
    const baseline = await snapshot();
    // A bare POST, `content-length: 0`, and an empty body with a JSON or another content-type.
    const forms: Record<string, string>[] = [
      {},
      { "content-length": "0" },
      { "content-type": "application/json" },
      { "content-type": "text/plain" },
    ];
    for (const op of ops) {
      for (const headers of forms) {
        const res = await request<{ code: string; cause?: unknown[] }>(
          op.method.toUpperCase(),
          fillPath(op.path),
          { key: world.key, rawBody: new Uint8Array(0), headers },
        );
        const where = `${op.method.toUpperCase()} ${op.path} ${JSON.stringify(headers)} → ${res.status} ${res.raw.slice(0, 200)}`;
        expect(res.status, where).toBe(400);
        expect(res.body.code, where).toBe("bad_input");
        expect(res.body.cause?.length ?? 0, where).toBeGreaterThan(0);
        expect(
          res.body.cause?.every((c) => typeof c === "object" && c !== null && "path" in c && "message" in c),
          where,
        ).toBe(true);
      }
    }
    expect(await snapshot()).toBe(baseline);
  });

  it(
    "never a 5xx, always a well-formed refusal, never a change",
    async () => {
      aimAt({ doc: await openApiDocument(), ids: world.ids });
      const ops = await operations();
      let sent = 0;
      const baseline = await snapshot();
      for (const op of ops) {
        if (takesNoInput(op)) continue;
        const arbitrary = fc.oneof(...generators(op));
        await fc.assert(
          fc.asyncProperty(arbitrary, async (m) => {
            const key = world.key;
            const target = m.query ? `${m.path}?${m.query}` : m.path;
            const res = await request<Record<string, unknown>>(op.method.toUpperCase(), target, {
              key,
              headers: m.headers,
              rawBody: m.body,
            });
            sent++;
            const where = `${op.method.toUpperCase()} ${op.path} [${m.kind}] → ${res.status} ${res.raw.slice(0, 300)}`;
            expect(res.status, where).toBeGreaterThanOrEqual(400);
            expect(res.status, where).toBeLessThan(500);
            expect(res.status, where).not.toBe(429);
            const body = res.body;
            expect(typeof body === "object" && body !== null, where).toBe(true);
            expect(
              Object.keys(body).every((k) => ERROR_KEYS.has(k)),
              where,
            ).toBe(true);
            expect(typeof body.message, where).toBe("string");
            const code = body.code as keyof typeof ERROR_STATUS;
            expect(Object.keys(ERROR_STATUS), where).toContain(code);
            expect(ERROR_STATUS[code], where).toBe(res.status);
            // Nothing the fuzzer sends may change anything: every state equals the first one.
            expect(await snapshot(), where).toBe(baseline);
          }),
          { numRuns: RUNS, seed: SEED, endOnFailure: true },
        );
      }
      expect(sent).toBe(ops.filter((op) => !takesNoInput(op)).length * RUNS);
    },
    30_000 + RUNS * 2_000,
  );
});
