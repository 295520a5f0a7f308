/**
 * `keyExcess` (src/http/scopes.ts, API_CONTRACT §21): the one rule of what a key may make. Checked
 * against a brute-force model of what a key can do (every scope, every project, every moment):
 * generated parents and requests, and for every accepted child, everything it can do its parent
 * can do too; for every refused one, exactly the fields that let it do more are named.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grants, type KeyPowers, keyExcess, SCOPES, type Scope } from "../../src/http/scopes";

/** Every scope there is, and one added later that only `*` holds. */
const NAMED = SCOPES.filter((s) => s !== "*");
const LATER_SCOPE = "future:write";
const PROJECTS = ["p1", "p2", "p3", "p4"];
/** A project created after both keys: an unrestricted key sees it. */
const LATER_PROJECT = "p-later";
const T0 = Date.parse("2030-01-01T00:00:00.000Z");
const INSTANTS = [0, 1, 60_000, 3_600_000].map((d) => new Date(T0 + d).toISOString());

const holds = (key: KeyPowers, scope: string) =>
  scope === LATER_SCOPE ? key.scopes.includes("*") : grants(key.scopes, scope as Scope);
const sees = (key: KeyPowers, project: string) => key.projectIds === null || key.projectIds.includes(project);
const alive = (key: KeyPowers, at: number) => key.expiresAt === null || at < Date.parse(key.expiresAt);

/** Every moment where being alive can differ: each expiry, just before it, and long after all. */
const MOMENTS = [...INSTANTS.flatMap((i) => [Date.parse(i) - 1, Date.parse(i)]), T0 + 10 * 3_600_000];

/** What the key can do: one (scope, project, moment) at a time. */
function* abilities(key: KeyPowers) {
  for (const scope of [...NAMED, LATER_SCOPE])
    for (const project of [...PROJECTS, LATER_PROJECT])
      for (const at of MOMENTS)
        if (holds(key, scope) && sees(key, project) && alive(key, at)) yield { scope, project, at };
}

/** The model: a field exceeds when, on its own axis, the child can do something the parent cannot. */
function modelExcess(parent: KeyPowers, child: KeyPowers): string[] {
  const out: string[] = [];
  if ([...NAMED, LATER_SCOPE].some((s) => holds(child, s) && !holds(parent, s))) out.push("scopes");
  if ([...PROJECTS, LATER_PROJECT].some((p) => sees(child, p) && !sees(parent, p))) out.push("project_ids");
  if (MOMENTS.some((t) => alive(child, t) && !alive(parent, t))) out.push("expires_at");
  return out;
}

const scopesArb = fc.oneof(
  fc.constant(["*"]),
  fc.subarray([...NAMED], { minLength: 1 }),
  // `*` beside named scopes, as a client may send it.
  fc.subarray([...NAMED], { minLength: 1 }).map((s) => ["*", ...s]),
);
const powersArb: fc.Arbitrary<KeyPowers> = fc.record({
  scopes: scopesArb,
  projectIds: fc.option(fc.subarray(PROJECTS, { minLength: 1 }), { nil: null }),
  expiresAt: fc.option(fc.constantFrom(...INSTANTS), { nil: null }),
});

/** A key within `parent` on every axis (what a careful caller asks for). */
const withinArb = (parent: KeyPowers): fc.Arbitrary<KeyPowers> =>
  fc.record({
    scopes: parent.scopes.includes("*") ? scopesArb : fc.subarray([...parent.scopes], { minLength: 1 }),
    projectIds: parent.projectIds
      ? fc.subarray([...parent.projectIds], { minLength: 1 })
      : fc.option(fc.subarray(PROJECTS, { minLength: 1 }), { nil: null }),
    expiresAt: parent.expiresAt
      ? fc.constantFrom(...INSTANTS.filter((i) => i <= (parent.expiresAt as string)))
      : fc.option(fc.constantFrom(...INSTANTS), { nil: null }),
  });
/** A parent and a request: as often within it as anything at all. */
const pairArb = powersArb.chain((parent) =>
  fc.tuple(fc.constant(parent), fc.oneof(powersArb, withinArb(parent))),
);

describe("keyExcess", () => {
  it("names exactly the fields on which the child could do more than its parent (brute-force model)", () => {
    fc.assert(
      fc.property(pairArb, ([parent, child]) => {
        const named = keyExcess(parent, child).map((e) => e.path);
        expect(named).toEqual(modelExcess(parent, child));
        expect(new Set(named).size).toBe(named.length);
      }),
      { numRuns: 2000, seed: 44 },
    );
  });

  it("a child it accepts can do nothing its parent cannot", () => {
    fc.assert(
      fc.property(pairArb, ([parent, child]) => {
        fc.pre(keyExcess(parent, child).length === 0);
        const beyond = [...abilities(child)].filter(
          ({ scope, project, at }) => !(holds(parent, scope) && sees(parent, project) && alive(parent, at)),
        );
        expect(beyond).toEqual([]);
      }),
      { numRuns: 300, seed: 45 },
    );
  });

  it("accepts every key's own powers, and anything narrower on each axis", () => {
    fc.assert(
      fc.property(powersArb, (key) => {
        expect(keyExcess(key, key)).toEqual([]);
        const narrower: KeyPowers = {
          scopes: key.scopes.includes("*") ? ["projects:read"] : key.scopes.slice(0, 1),
          projectIds: key.projectIds ? key.projectIds.slice(0, 1) : ["p1"],
          expiresAt: key.expiresAt ?? INSTANTS[0] ?? null,
        };
        expect(keyExcess(key, narrower)).toEqual([]);
      }),
      { numRuns: 500, seed: 46 },
    );
  });

  it("`*` only from a `*` key, even one that lists every scope there is", () => {
    const everyScope: KeyPowers = { scopes: NAMED, projectIds: null, expiresAt: null };
    expect(keyExcess(everyScope, { ...everyScope, scopes: ["*"] }).map((e) => e.path)).toEqual(["scopes"]);
    expect(keyExcess(everyScope, everyScope)).toEqual([]);
  });

  it("one message per field, naming what exceeds", () => {
    const parent: KeyPowers = {
      scopes: ["deployments:read"],
      projectIds: ["p1"],
      expiresAt: INSTANTS[1] ?? null,
    };
    const excess = keyExcess(parent, {
      scopes: ["deployments:read", "deployments:write", "*"],
      projectIds: ["p1", "p2"],
      expiresAt: INSTANTS[2] ?? null,
    });
    expect(excess.map((e) => e.path)).toEqual(["scopes", "project_ids", "expires_at"]);
    expect(excess[0]?.message).toContain("`deployments:write`, `*`");
    expect(excess[1]?.message).toContain("p2");
    expect(excess[1]?.message).not.toContain("p1");
    expect(excess[2]?.message).toContain(INSTANTS[1]);
  });
});
