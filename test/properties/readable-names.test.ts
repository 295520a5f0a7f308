/**
 * Names a person can read (API_CONTRACT §33), on every create and rename that takes the `name` of a
 * record §33 lists, public and internal: a project's (§3), an environment's (§9, §23), an API key's
 * (§9, §21), a trust's (§27), an audit stream's (§30). A blank name, or one holding a control or a
 * bidirectional control, is `400 bad_input` at `name` and makes nothing; any other Unicode is
 * taken as given; a name stored before §33 still reads (every answer checked against
 * /openapi.json) and is renamed. An organization's name is not listed, and part five changes no
 * behaviour it does not name: 1–100 characters, any of them (§3), as components', stacks' and
 * accounts' names stay free strings (§9; test/properties/null-as-absent.test.ts). The rule
 * itself: test/unit/readable-name.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ApiResponse, internal, request } from "../helpers/api";
import { type ErrorBody, expectError } from "../helpers/expect";
import { type Caller, createOwnedProject, createProject, unique } from "../helpers/factories";
import { setLimits } from "../helpers/limits";
import { createTrust, newIssuer, trustBody } from "../helpers/oidc";

type Named = { id: string; name: string | null };
type World = Awaited<ReturnType<typeof createOwnedProject>>;

/** Each operation that gives a record a name: the request with `name`, in a world of its own. */
const OPERATIONS: Record<string, (w: World, name: string) => Promise<ApiResponse<Named & ErrorBody>>> = {
  createProject: (w, name) => request("POST", "/v1/projects", { key: w.owner.key, body: { name } }),
  "replaceProject (a rename)": (w, name) =>
    request("PUT", `/v1/projects/${w.project.id}`, {
      key: w.owner.key,
      body: { name, default_environment_id: w.project.default_environment_id },
    }),
  createEnvironment: (w, name) =>
    request("POST", `/v1/projects/${w.project.id}/environments`, { key: w.owner.key, body: { name } }),
  "updateEnvironment (a rename)": (w, name) =>
    request("PATCH", `/v1/environments/${w.project.default_environment_id}`, {
      key: w.owner.key,
      body: { name },
    }),
  internalCreateEnvironment: (w, name) =>
    internal("POST", `/projects/${w.project.id}/environments`, { name }),
  "createApiKey (POST /v1/api-keys)": (w, name) =>
    request("POST", "/v1/api-keys", { key: w.owner.key, body: { name } }),
  internalCreateApiKey: (w, name) =>
    internal("POST", `/orgs/${w.org.id}/api-keys`, {
      account_id: w.owner.accountId,
      created_by: w.owner.accountId,
      name,
    }),
  createOidcTrust: (w, name) =>
    request("POST", "/v1/oidc-trusts", { key: w.owner.key, body: trustBody(newIssuer(), { name }) }),
  createAuditStream: async (w, name) => {
    // More than the default 5 (§29); disabled, so that nothing is sent to its receiver.
    await setLimits(w.org.id, { audit_streams: 20 });
    return request("POST", `/v1/orgs/${w.org.id}/audit-streams`, {
      key: w.owner.key,
      body: { name, url: SIEM, enabled: false },
    });
  },
  "updateAuditStream (a rename)": async (w, name) =>
    request("PATCH", `/v1/audit-streams/${await auditStreamOf(w)}`, { key: w.owner.key, body: { name } }),
};

const SIEM = "https://siem.example.com/ingest";
/** The world's one audit stream (disabled), made on first use. */
const streams = new Map<string, Promise<string>>();
const auditStreamOf = (w: World) => {
  const made =
    streams.get(w.org.id) ??
    request<Named>("POST", `/v1/orgs/${w.org.id}/audit-streams`, {
      key: w.owner.key,
      body: { name: unique("siem"), url: SIEM, enabled: false },
    }).then((res) => res.body.id);
  streams.set(w.org.id, made);
  return made;
};

const UNREADABLE: [string, string][] = [
  ["empty", ""],
  ["spaces", "   "],
  ["other white space", "\u3000\u00A0\u2003\u202F"],
  ["a tab", "\t"],
  ["NUL inside", "deploy\u0000prod"],
  ["a line feed", "prod\nstaging"],
  ["U+0085 (NEL)", "prod\u0085"],
  ["U+009F", "a\u009Fb"],
  ["U+007F (DEL)", "\u007Fprod"],
  ["U+2028 (LINE SEPARATOR)", "a\u2028b"],
  ["U+2029", "a\u2029"],
  ["U+202E (RIGHT-TO-LEFT OVERRIDE)", "invoice\u202Efdp.exe"],
  ["U+202A", "\u202Aprod"],
  ["U+2066 … U+2069 (isolates)", "\u2066prod\u2069"],
];

/** Readable names, each made unique (names of a project or an environment are unique per parent). */
const READABLE = ["Café déjà vu", "生产环境", "עברית", "🚀 launch 👩🏽‍💻", "  padded  ", "\u200Bzero-width"];

/** The rows that hold what each operation names: nothing of the refused requests may be among them. */
async function namesIn(orgId: string): Promise<string[]> {
  const rows = await env.DB.prepare(
    `SELECT name FROM organizations WHERE name NOT LIKE 'org-%'
       AND created_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-60 seconds')
     UNION ALL SELECT name FROM projects WHERE org_id = ?1
     UNION ALL SELECT e.name FROM environments e JOIN projects p ON p.id = e.project_id WHERE p.org_id = ?1
     UNION ALL SELECT name FROM api_keys WHERE org_id = ?1 AND name IS NOT NULL
     UNION ALL SELECT name FROM oidc_trusts WHERE org_id = ?1`,
  )
    .bind(orgId)
    .all<{ name: string }>();
  // A sixth term is past D1's limit of a compound SELECT: its own statement.
  const streams = await env.DB.prepare("SELECT name FROM audit_streams WHERE org_id = ?1")
    .bind(orgId)
    .all<{ name: string }>();
  return [...rows.results, ...streams.results].map((r) => r.name);
}

describe("a record's name is readable (§33), on every create and rename", () => {
  it.each(Object.keys(OPERATIONS))(
    "%s: each unreadable name is 400 bad_input at `name`, making nothing",
    async (label) => {
      const send = OPERATIONS[label] as (typeof OPERATIONS)[string];
      const w = await createOwnedProject();
      // What a rename renames exists before the count.
      if (label.startsWith("updateAuditStream")) await auditStreamOf(w);
      const before = await namesIn(w.org.id);
      for (const [what, name] of UNREADABLE) {
        const res = await send(w, name);
        const body = expectError(res, 400, "bad_input", "name");
        // The empty name is below the published `minLength` first.
        expect(body.cause?.find((c) => c.path === "name")?.message, what).toMatch(
          name === "" ? /Too small/ : /white space|control character|bidirectional control/,
        );
      }
      const after = await namesIn(w.org.id);
      expect(after.filter((n) => UNREADABLE.some(([, bad]) => bad === n))).toEqual([]);
      expect(after.length).toBe(before.length);
    },
  );

  it.each(Object.keys(OPERATIONS))(
    "%s: accents, scripts, emoji and spaces around are taken as given",
    async (label) => {
      const send = OPERATIONS[label] as (typeof OPERATIONS)[string];
      const w = await createOwnedProject();
      for (const readable of READABLE) {
        const name = `${readable} ${unique("n")}`;
        const res = await send(w, name);
        expect(res.status, `${name}: ${res.raw}`).toBeLessThan(300);
        expect(res.body.name).toBe(name);
      }
    },
  );

  it("names the character it refuses", async () => {
    const { owner } = await createOwnedProject();
    const res = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "a\u202Eb" },
    });
    expect(expectError(res, 400, "bad_input", "name").cause).toEqual([
      { path: "name", message: expect.stringContaining("U+202E at 1") },
    ]);
  });
});

describe("an organization's name, which §33 does not list", () => {
  it("is 1–100 characters of any kind, public and internal, as before part five (§3)", async () => {
    const { owner } = await createOwnedProject();
    const creates: Record<string, (name: string) => Promise<ApiResponse<Named & ErrorBody>>> = {
      createOrg: (name) => request("POST", "/v1/orgs", { key: owner.key, body: { name } }),
      internalCreateOrg: (name) => internal("POST", "/orgs", { name }),
    };
    for (const [label, create] of Object.entries(creates)) {
      for (const [what, name] of UNREADABLE.filter(([, n]) => n !== "")) {
        const res = await create(name);
        expect([res.status, res.body.name], `${label}, ${what}: ${res.raw}`).toEqual([201, name]);
      }
      expectError(await create(""), 400, "bad_input", "name");
      expectError(await create("x".repeat(101)), 400, "bad_input", "name");
    }
  });
});

describe("names stored before §33", () => {
  /** What an older version stored: the row's name set as it was, past the rule. */
  const store = (table: string, id: string, name: string) =>
    env.DB.prepare(`UPDATE ${table} SET name = ? WHERE id = ?`).bind(name, id).run();

  const LEGACY = "old\u202Ename\u0007 ";

  it("read as stored, in records and lists of every kind (the answers match /openapi.json)", async () => {
    const w = await createOwnedProject();
    const key = await request<Named>("POST", "/v1/api-keys", { key: w.owner.key, body: { name: "ci" } });
    const trust = await createTrust(w.owner);
    const stream = await auditStreamOf(w);
    await store("organizations", w.org.id, LEGACY);
    await store("projects", w.project.id, LEGACY);
    await store("environments", w.project.default_environment_id, LEGACY);
    await store("api_keys", key.body.id, LEGACY);
    await store("oidc_trusts", trust.id, LEGACY);
    await store("audit_streams", stream, LEGACY);
    const reads: [string, (body: unknown) => unknown][] = [
      ["/v1/orgs", (b) => (b as { data: Named[] }).data.find((o) => o.id === w.org.id)?.name],
      [`/v1/projects/${w.project.id}`, (b) => (b as Named).name],
      ["/v1/projects", (b) => (b as { data: Named[] }).data.find((p) => p.id === w.project.id)?.name],
      [`/v1/environments/${w.project.default_environment_id}`, (b) => (b as Named).name],
      [`/v1/projects/${w.project.id}/environments`, (b) => (b as { data: Named[] }).data[0]?.name],
      [`/v1/api-keys/${key.body.id}`, (b) => (b as Named).name],
      ["/v1/api-keys", (b) => (b as { data: Named[] }).data.find((k) => k.id === key.body.id)?.name],
      [`/v1/oidc-trusts/${trust.id}`, (b) => (b as Named).name],
      ["/v1/oidc-trusts", (b) => (b as { data: Named[] }).data.find((t) => t.id === trust.id)?.name],
      [`/v1/audit-streams/${stream}`, (b) => (b as Named).name],
      [
        `/v1/orgs/${w.org.id}/audit-streams`,
        (b) => (b as { data: Named[] }).data.find((t) => t.id === stream)?.name,
      ],
    ];
    for (const [path, nameOf] of reads) {
      const res = await request("GET", path, { key: w.owner.key });
      expect(res.status, `${path}: ${res.raw}`).toBe(200);
      expect(nameOf(res.body), path).toBe(LEGACY);
    }
  });

  it("a project, an environment and an audit stream so named are renamed to a readable name, not to another unreadable one", async () => {
    const w = await createOwnedProject();
    const other = await createProject(w.owner);
    const stream = await auditStreamOf(w);
    await store("projects", other.id, LEGACY);
    await store("environments", other.default_environment_id, LEGACY);
    await store("audit_streams", stream, LEGACY);
    const rename = (owner: Caller, name: string) =>
      Promise.all([
        request<Named>("PUT", `/v1/projects/${other.id}`, {
          key: owner.key,
          body: { name, default_environment_id: other.default_environment_id },
        }),
        request<Named>("PATCH", `/v1/environments/${other.default_environment_id}`, {
          key: owner.key,
          body: { name },
        }),
        request<Named>("PATCH", `/v1/audit-streams/${stream}`, { key: owner.key, body: { name } }),
      ]);
    for (const res of await rename(w.owner, "still\u202Ebad")) expectError(res, 400, "bad_input", "name");
    const renamed = await rename(w.owner, "Readable again");
    expect(renamed.map((r) => [r.status, r.body.name])).toEqual([
      [200, "Readable again"],
      [200, "Readable again"],
      [200, "Readable again"],
    ]);
  });
});
