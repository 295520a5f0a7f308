/**
 * Keys that make narrower keys (API_CONTRACT §21), as a property through the real Worker and D1:
 * fast-check generates calling keys (scopes, projects, expiry) and create requests (each field
 * left out, null, or a value), sends them, and checks every answer against the rule's model:
 * a request that would exceed is `403` naming exactly the fields that exceed and makes nothing;
 * an accepted key holds what it asked for (or the caller's own) and, tried against every project
 * and a read of each kind, can do nothing its parent cannot. The rule itself, exhaustively and
 * without D1: test/unit/key-excess.test.ts.
 */
import { env } from "cloudflare:test";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type KeyPowers, keyExcess } from "../../src/http/scopes";
import type { NewApiKeyRecord } from "../../src/schemas/organization";
import { request } from "../helpers/api";
import type { ErrorBody } from "../helpers/expect";
import { type Caller, createApiKey, createOrgWithOwner, createProject } from "../helpers/factories";

const RUNS = 14;
/** A read of each kind a probe can try, by the scope it needs (`{p}`: a project's id). */
const PROBES: Record<string, string> = {
  "projects:read": "/v1/projects/{p}",
  "members:read": "/v1/projects/{p}/members",
  "integrations:read": "/v1/projects/{p}/notification-integrations",
  "events:read": "/v1/projects/{p}/events",
  "orgs:read": "/v1/orgs",
  "api-keys:read": "/v1/api-keys",
};
const SCOPE_POOL = [...Object.keys(PROBES), "deployments:write"];

let owner: Caller;
let projects: string[];

beforeAll(async () => {
  ({ owner } = await createOrgWithOwner());
  projects = [];
  for (let i = 0; i < 3; i++) projects.push((await createProject(owner)).id);
});

const hours = (n: number) => new Date(Date.now() + n * 3_600_000).toISOString();

type Field<T> = { kind: "absent" } | { kind: "null" } | { kind: "value"; value: T };
const field = <T>(value: fc.Arbitrary<T>, nullable = true): fc.Arbitrary<Field<T>> =>
  fc.oneof(
    fc.constant({ kind: "absent" as const }),
    ...(nullable ? [fc.constant({ kind: "null" as const })] : []),
    value.map((v) => ({ kind: "value" as const, value: v })),
  );

const projectIndexes = fc.subarray([0, 1, 2], { minLength: 1 });
const parentArb = fc.record({
  // The parent needs `api-keys:write` to make keys at all (§15's scope check).
  scopes: fc.oneof(
    fc.constant(["*"]),
    fc.subarray(SCOPE_POOL, { minLength: 1 }).map((s) => ["api-keys:write", ...s]),
  ),
  projects: fc.option(projectIndexes, { nil: null }),
  expiresIn: fc.option(fc.constantFrom(1, 2), { nil: null }),
});
const requestArb = fc.record({
  scopes: field(
    fc.oneof(fc.constant(["*"]), fc.subarray([...SCOPE_POOL, "api-keys:write"], { minLength: 1 })),
    false,
  ),
  projects: field(projectIndexes),
  expiresIn: field(fc.constantFrom(1, 2, 3)),
});

async function status(key: string, path: string): Promise<number> {
  return (await request("GET", path, { key })).status;
}

describe("POST /v1/api-keys, generated", () => {
  it("refuses exactly what would exceed the calling key; an accepted key can do nothing its parent cannot", async () => {
    let accepted = 0;
    let refused = 0;
    let childPassed = 0;
    await fc.assert(
      fc.asyncProperty(parentArb, requestArb, async (p, r) => {
        const parentFields = {
          scopes: p.scopes,
          project_ids: p.projects?.map((i) => projects[i]) ?? null,
          expires_at: p.expiresIn === null ? null : hours(p.expiresIn),
        };
        const parent = await createApiKey(owner, parentFields);
        const body: Record<string, unknown> = {};
        if (r.scopes.kind === "value") body.scopes = r.scopes.value;
        if (r.projects.kind !== "absent")
          body.project_ids = r.projects.kind === "null" ? null : r.projects.value.map((i) => projects[i]);
        if (r.expiresIn.kind !== "absent")
          body.expires_at = r.expiresIn.kind === "null" ? null : hours(r.expiresIn.value);

        const parentPowers: KeyPowers = {
          scopes: parent.record.scopes,
          projectIds: parent.record.project_ids,
          expiresAt: parent.record.expires_at,
        };
        const asked: KeyPowers = {
          scopes: "scopes" in body ? (body.scopes as string[]) : parentPowers.scopes,
          projectIds: "project_ids" in body ? (body.project_ids as string[] | null) : parentPowers.projectIds,
          expiresAt: "expires_at" in body ? (body.expires_at as string | null) : parentPowers.expiresAt,
        };
        const excess = keyExcess(parentPowers, asked).map((e) => e.path);
        const res = await request<NewApiKeyRecord & ErrorBody>("POST", "/v1/api-keys", {
          key: parent.key,
          body,
        });
        if (excess.length) {
          refused++;
          expect(res.status, res.raw).toBe(403);
          expect(res.body.cause?.map((c) => c.path)).toEqual(excess);
          const made = await env.DB.prepare("SELECT count(*) AS n FROM api_keys WHERE parent_id = ?")
            .bind(parent.keyId)
            .first<{ n: number }>();
          expect(made?.n).toBe(0);
          return;
        }
        accepted++;
        expect(res.status, res.raw).toBe(201);
        expect(res.body).toMatchObject({
          parent_id: parent.keyId,
          scopes: asked.scopes,
          project_ids: asked.projectIds,
          expires_at: asked.expiresAt,
        });
        // Every probe the child passes, the parent passes too.
        for (const [scope, template] of Object.entries(PROBES)) {
          for (const project of template.includes("{p}") ? projects : [""]) {
            const path = template.replace("{p}", project);
            if ((await status(res.body.key, path)) === 200) {
              childPassed++;
              expect(await status(parent.key, path), `${scope} ${path}`).toBe(200);
            }
          }
        }
      }),
      { numRuns: RUNS, seed: 21 },
    );
    // The generators reach both sides of the rule.
    expect(accepted).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    // …and the implication above was tested on probes a child passed, not only on refusals.
    expect(childPassed).toBeGreaterThan(0);
  }, 120_000);
});
