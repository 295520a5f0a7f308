/**
 * D1 split by organization (docs/capacity.md, "What changes then"): a directory database and N
 * organization databases, each its own primary and its own replicas.
 *
 * - The directory is the `DB` binding: organizations (each row names the binding of its
 *   organization database, `organizations.database`), accounts, and the index of API keys by hash
 *   (`api_key_index`). It is read by authentication (cached per isolate) and by the internal API.
 * - An organization database (`ORG_DATABASES`, binding names, `DB` among them or not) holds
 *   everything inside its organizations: a copy of each organization's row and of its members'
 *   accounts, the memberships, the keys themselves, projects and all below them, events,
 *   deliveries, audit entries. A request of a key reads and writes exactly one of them.
 *
 * Every database has the same tables (one migrations directory, applied to each binding); each
 * uses its side's. Where a database is both (the `DB` binding listed in `ORG_DATABASES`), the
 * directory's row of an organization and its copy are one row, and a write on both sides is one
 * batch.
 */

/** The directory's binding. */
export const DIRECTORY = "DB";

const BINDING_NAME = /^[A-Z][A-Z0-9_]{0,62}$/;

/**
 * The organization databases named by `ORG_DATABASES` (comma-separated binding names; default
 * `DB`). A name that cannot be a binding's is a configuration error, thrown at once; one that is
 * not bound fails the requests of its organizations only (`d1Of`), and `npm run check:deploy`
 * refuses a wrangler.toml that lists one.
 */
export function orgDatabasesOf(list: string | undefined): readonly string[] {
  const names = (list ?? DIRECTORY)
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0) throw new Error("ORG_DATABASES names no database");
  const bad = names.find((name) => !BINDING_NAME.test(name));
  if (bad !== undefined)
    throw new Error(`ORG_DATABASES names ${JSON.stringify(bad)}, which is no binding name`);
  return [...new Set(names)];
}

/** The D1 binding `name`, or an error saying which binding is missing. */
export function d1Of(env: Env, name: string): D1Database {
  const binding = BINDING_NAME.test(name) ? (env as unknown as Record<string, unknown>)[name] : undefined;
  if (!binding || typeof (binding as D1Database).withSession !== "function") {
    throw new DatabaseUnavailable(name);
  }
  return binding as D1Database;
}

/**
 * The database the directory names for the organization `orgId` now (API_CONTRACT §32: a move
 * changes it at its switch), read from the directory's primary; undefined when there is no such
 * organization. For the objects that keep an organization's timers and sends (the gates, the audit
 * streams): a call made just before a move switched can name the database the organization left.
 */
export async function homeDatabaseOf(env: Env, orgId: string): Promise<string | undefined> {
  const row = await d1Of(env, DIRECTORY)
    .prepare("SELECT database FROM organizations WHERE id = ?")
    .bind(orgId)
    .first<{ database: string }>();
  return row?.database;
}

/**
 * An organization whose database is not bound to this Worker (a misconfiguration, or a database
 * being moved): its requests fail, and only its own.
 */
export class DatabaseUnavailable extends Error {
  constructor(readonly database: string) {
    super(`the D1 database ${JSON.stringify(database)} is not bound to this Worker`);
    this.name = "DatabaseUnavailable";
  }
}

/**
 * Where a new organization goes: among `candidates` (`NEW_ORG_DATABASES`, default every
 * organization database), by a hash of its id, so organizations spread evenly and the choice
 * needs no shared counter. The directory records the choice, so an organization can be moved later.
 */
export async function placeOrganization(orgId: string, candidates: readonly string[]): Promise<string> {
  if (candidates.length === 1) return candidates[0] as string;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(orgId)));
  const n =
    (((digest[0] ?? 0) << 24) | ((digest[1] ?? 0) << 16) | ((digest[2] ?? 0) << 8) | (digest[3] ?? 0)) >>> 0;
  return candidates[n % candidates.length] as string;
}
