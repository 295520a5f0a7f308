/**
 * API_CONTRACT §32 "a write that answers 2xx is in the organization after the move": a move's
 * switch makes its isolate forget where the organization was (its internal API's locations, its
 * keys). A lookup that read before the switch and answers after it must not put the old database
 * back for a TTL: where the settle time is shorter than that (locally, 1 s), the organization's
 * rows there are removed and its fence lifted while the isolate would still send writes there,
 * answered 201 and never seen again. Here the forget comes while the lookup reads (its session
 * opened between the two), on the real databases.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createServiceContext, type ServiceContext } from "../../../src/context";
import { forgetLocations, knownLocation } from "../../../src/db/locations";
import { locate } from "../../../src/middleware/internal-database";
import { authenticate, forgetOrganization, keyCacheSize } from "../../../src/services/api-keys/authenticate";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { createProject, unique } from "../../helpers/factories";

/** A context on `database` whose every other session is opened after `meanwhile` ran. */
function contextWith(database: string, meanwhile: () => void): ServiceContext {
  const ctx = createServiceContext({ env, requestId: unique("lookup"), database });
  return {
    ...ctx,
    openSession: (start, other) => {
      meanwhile();
      return ctx.openSession(start, other);
    },
  };
}

describe("lookups a forget overtook", () => {
  it("the internal API's location of an id: answered, not remembered", async () => {
    const { owner } = await createOrgWithOwnerIn("DB_ORG_2");
    const project = await createProject(owner);
    const key = `projects/${project.id}`;

    const plain = contextWith("DB", () => undefined);
    expect(await locate(env, plain, "projects", project.id)).toBe("DB_ORG_2");
    expect(knownLocation(key, Date.now())).toBe("DB_ORG_2");

    forgetLocations();
    const overtaken = contextWith("DB", forgetLocations);
    expect(await locate(env, overtaken, "projects", project.id)).toBe("DB_ORG_2");
    expect(knownLocation(key, Date.now())).toBeUndefined();
  });

  it("a key's identity: answered, not cached", async () => {
    const { org, owner } = await createOrgWithOwnerIn("DB_ORG_2");
    // The key's directory row is read on a session of its own (the context is on the organization's).
    const overtaken = contextWith("DB_ORG_2", () => forgetOrganization(org.id));
    const before = keyCacheSize().keys;
    expect((await authenticate(overtaken, owner.key)).identity.orgId).toBe(org.id);
    expect(keyCacheSize().keys).toBe(before);

    const plain = contextWith("DB_ORG_2", () => undefined);
    expect((await authenticate(plain, owner.key)).identity.orgId).toBe(org.id);
    expect(keyCacheSize().keys).toBe(before + 1);
  });
});
