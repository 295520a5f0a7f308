/**
 * D1 split by organization (src/db/databases.ts), through the real runtime with two organization
 * databases: `DB` (also the directory) and `DB_ORG_2`. An organization lives in the database the
 * directory names; everything its keys and the engine do runs there and nowhere else.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { placeOrganization } from "../../src/db/databases";
import { newId } from "../../src/lib/ids";
import { hashKey } from "../../src/services/api-keys/authenticate";
import { internal, internalOk, request } from "../helpers/api";
import { runCron } from "../helpers/cron";
import { createOrgIn, createOrgWithOwnerIn, d1, type OrgDatabase } from "../helpers/databases";
import { reportOk } from "../helpers/engine";
import {
  createCaller,
  createDeployment,
  createOrg,
  createOrgWithOwner,
  createProject,
  createStack,
  type Org,
  unique,
} from "../helpers/factories";
import { captureLogs } from "../helpers/logs";
import { allowTheLocalReceiver, eventually, hook, integrate, received } from "../helpers/webhooks";

allowTheLocalReceiver();
// Lines these tests cause on purpose (a directory that fails, an unbound database, the cron finishing).
const errors = captureLogs("error");
const warnings = captureLogs("warn");

/** How many rows of `table` have `column` = `value` in `database`. */
async function rowsIn(database: OrgDatabase, table: string, value: string, column = "id"): Promise<number> {
  const row = await d1(database)
    .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${column} = ?`)
    .bind(value)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** In `database` and not in the other one. */
async function onlyIn(database: OrgDatabase, table: string, value: string, column = "id") {
  const other: OrgDatabase = database === "DB" ? "DB_ORG_2" : "DB";
  expect(await rowsIn(database, table, value, column)).toBeGreaterThan(0);
  expect(await rowsIn(other, table, value, column)).toBe(0);
}

const directoryRow = (orgId: string) =>
  env.DB.prepare("SELECT database FROM organizations WHERE id = ?").bind(orgId).first<{ database: string }>();

const ownerIn = createOrgWithOwnerIn;

const plain = (value: string) => ({ type: "string", value });

describe("organizations across databases", () => {
  it("two organizations land in different databases, each named by the directory", async () => {
    const a = await createOrg();
    const b = await createOrgIn("DB_ORG_2");
    expect(await directoryRow(a.id)).toEqual({ database: "DB" });
    expect(await directoryRow(b.id)).toEqual({ database: "DB_ORG_2" });
    // The organization database holds its own copy of the row; the directory's `DB` does not hold b's rows.
    expect(await rowsIn("DB_ORG_2", "organizations", b.id)).toBe(1);

    const owner = await createCaller(b, "owner");
    // The account is the directory's; the organization's database has its copy with the membership.
    expect(await rowsIn("DB", "accounts", owner.accountId)).toBe(1);
    expect(await rowsIn("DB_ORG_2", "accounts", owner.accountId)).toBe(1);
    await onlyIn("DB_ORG_2", "org_members", b.id, "org_id");
    // The key lives with its organization; the directory keeps only its index.
    await onlyIn("DB_ORG_2", "api_keys", owner.keyId);
    expect(await rowsIn("DB", "api_key_index", owner.keyId, "key_id")).toBe(1);

    const project = await createProject(owner);
    await onlyIn("DB_ORG_2", "projects", project.id);
    await onlyIn("DB_ORG_2", "audit_log", project.id, "target_id");
  });

  it("a new organization is placed by a hash of its id, the same way every time, over every candidate", async () => {
    const ids = Array.from({ length: 200 }, (_, i) => `org-${i}`);
    const placed = await Promise.all(ids.map((id) => placeOrganization(id, ["DB", "DB_ORG_2"])));
    const inSecond = placed.filter((database) => database === "DB_ORG_2").length;
    expect(inSecond).toBeGreaterThan(60);
    expect(inSecond).toBeLessThan(140);
    expect(await Promise.all(ids.map((id) => placeOrganization(id, ["DB", "DB_ORG_2"])))).toEqual(placed);
    expect(await placeOrganization("any", ["DB_ORG_2"])).toBe("DB_ORG_2");
  });

  it("an internal create names an organization database, or is 400 for one that is not configured", async () => {
    const res = await internal("POST", "/orgs", { name: unique("org"), database: "DB_NOWHERE" });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: "bad_input", cause: [{ path: "database" }] });
  });

  it("nothing of one organization is visible through another's key, whichever database each is in", async () => {
    const a = await createOrgWithOwner();
    const b = await ownerIn("DB_ORG_2");
    const [pa, pb] = [await createProject(a.owner), await createProject(b.owner)];
    for (const [caller, theirs] of [
      [a.owner, pb],
      [b.owner, pa],
    ] as const) {
      expect((await request("GET", `/v1/projects/${theirs.id}`, { key: caller.key })).status).toBe(404);
      const list = await request<{ data: { id: string }[] }>("GET", "/v1/projects", { key: caller.key });
      expect(list.body.data.map((p) => p.id)).not.toContain(theirs.id);
      expect((await request("GET", `/v1/orgs/${theirs.org_id}/projects`, { key: caller.key })).status).toBe(
        404,
      );
    }
  });

  it("a key's whole life runs in its organization's database: variables, the engine, follow, redeploy, derived keys", async () => {
    const { org, owner } = await ownerIn("DB_ORG_2");
    const project = await createProject(owner);
    const environmentId = project.default_environment_id;

    // §18: a variable set and its history.
    const base = `/v1/environments/${environmentId}/variables`;
    const patched = await request("PATCH", base, { key: owner.key, body: { variables: { A: plain("1") } } });
    expect(patched.status).toBe(200);
    const versions = await request<{ data: unknown[] }>("GET", `${base}/versions`, { key: owner.key });
    expect(versions.body.data).toHaveLength(1);
    await onlyIn("DB_ORG_2", "variables", environmentId, "environment_id");

    // The engine, by ids alone: the internal API finds their database.
    const stack = await createStack(environmentId);
    await onlyIn("DB_ORG_2", "stacks", stack.id);
    const resource = await internalOk<{ id: string }>("POST", `/stacks/${stack.id}/resources`, {
      resource_type: "AWS::S3::Bucket",
      physical_id: unique("bucket"),
      status: "create_in_progress",
    });
    await internalOk("PATCH", `/resources/${resource.id}`, { status: "create_complete" });
    const deployment = await createDeployment(environmentId, [stack.id]);
    await onlyIn("DB_ORG_2", "deployments", deployment.id);
    const queued = await internalOk<{ data: { id: string }[] }>(
      "GET",
      "/deployments?status=queued&limit=100&sort_by=-created_at",
    );
    expect(queued.data.map((d) => d.id)).toContain(deployment.id);

    // §19: wait for it while the engine moves it to its end.
    const waiting = request<{ status: string }>("GET", `/v1/deployments/${deployment.id}/wait?timeout=20`, {
      key: owner.key,
    });
    await reportOk(deployment.id, { status: "in_progress" });
    await internalOk("POST", `/deployments/${deployment.id}/logs`, { lines: [{ message: "building" }] });
    await reportOk(deployment.id, { status: "failed" });
    expect((await waiting).body.status).toBe("failed");
    const timeline = await request<{ data: unknown[] }>("GET", `/v1/deployments/${deployment.id}/timeline`, {
      key: owner.key,
    });
    expect(timeline.status).toBe(200);
    expect(timeline.body.data.length).toBeGreaterThan(0);

    // §20: run it again, under an Idempotency-Key replayed byte for byte.
    const headers = { "idempotency-key": unique("redeploy") };
    const again = await request("POST", `/v1/deployments/${deployment.id}/redeploy`, {
      key: owner.key,
      headers,
    });
    expect(again.status).toBe(201);
    const replay = await request("POST", `/v1/deployments/${deployment.id}/redeploy`, {
      key: owner.key,
      headers,
    });
    expect(replay.raw).toBe(again.raw);

    // §21: a key made by a key, used, then revoked.
    const derived = await request<{ id: string; key: string }>("POST", "/v1/api-keys", {
      key: owner.key,
      body: { scopes: ["projects:read"] },
    });
    expect(derived.status).toBe(201);
    await onlyIn("DB_ORG_2", "api_keys", derived.body.id);
    const current = await request<{ id: string }>("GET", "/v1/api-keys/current", { key: derived.body.key });
    expect(current.body.id).toBe(derived.body.id);
    expect((await request("DELETE", `/v1/api-keys/${derived.body.id}`, { key: owner.key })).status).toBe(204);
    expect((await request("GET", "/v1/api-keys/current", { key: derived.body.key })).status).toBe(401);

    // §14: the audit log, read where it was written.
    const audit = await request<{ data: { action: string }[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log?limit=100`,
      {
        key: owner.key,
      },
    );
    expect(audit.body.data.map((e) => e.action)).toEqual(
      expect.arrayContaining(["createProject", "redeployDeployment", "createApiKey", "revokeApiKey"]),
    );
  });

  it("a key's last use is written to its organization's database", async () => {
    const { owner } = await ownerIn("DB_ORG_2");
    expect((await request("GET", "/v1/api-keys/current", { key: owner.key })).status).toBe(200);
    await eventually(async () => {
      const row = await d1("DB_ORG_2")
        .prepare("SELECT last_used_at FROM api_keys WHERE id = ?")
        .bind(owner.keyId)
        .first<{ last_used_at: string | null }>();
      expect(row?.last_used_at).toBeTruthy();
    });
  });

  it("POST /v1/orgs places the new organization beside the caller's, with its owner", async () => {
    const { owner } = await ownerIn("DB_ORG_2");
    const res = await request<Org>("POST", "/v1/orgs", { key: owner.key, body: { name: unique("org") } });
    expect(res.status).toBe(201);
    expect(await directoryRow(res.body.id)).toEqual({ database: "DB_ORG_2" });
    await onlyIn("DB_ORG_2", "org_members", res.body.id, "org_id");
    // Acting in it needs a key issued for it (API_CONTRACT §10): the internal API finds its database.
    const key = await internalOk<{ key: string }>("POST", `/orgs/${res.body.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    const orgs = await request<{ data: Org[] }>("GET", "/v1/orgs", { key: key.key });
    expect(orgs.body.data.map((o) => o.id)).toEqual([res.body.id]);
  });

  it("an organization a crash left without its directory row is unreachable until the cron finishes it", async () => {
    const id = newId();
    await d1("DB_ORG_2")
      .prepare("INSERT INTO organizations (id, name, created_at, database) VALUES (?, ?, ?, 'DB_ORG_2')")
      .bind(id, unique("org"), new Date().toISOString())
      .run();
    const account = await internalOk<{ id: string }>("POST", "/accounts", { name: unique("user") });
    const join = () => internal("POST", `/orgs/${id}/members`, { account_id: account.id, role: "owner" });
    expect((await join()).status).toBe(404);

    await runCron();

    expect(await directoryRow(id)).toEqual({ database: "DB_ORG_2" });
    expect((await join()).status).toBe(201);
  });

  it("the cron finishes any number of half-created organizations (past one statement's 100 parameters)", async () => {
    const ids = Array.from({ length: 150 }, () => newId());
    const at = new Date().toISOString();
    const org2 = d1("DB_ORG_2");
    await org2.batch(
      ids.map((id) =>
        org2
          .prepare("INSERT INTO organizations (id, name, created_at, database) VALUES (?, ?, ?, 'DB_ORG_2')")
          .bind(id, unique("org"), at),
      ),
    );

    await runCron();

    const found = await Promise.all(ids.map(directoryRow));
    expect(found.filter((row) => row?.database === "DB_ORG_2")).toHaveLength(150);
  });

  it("an organization whose directory row cannot be written is answered as created, once, and the cron finishes it", async () => {
    // The directory refuses every write (its reads still work): the organization's side commits first.
    const failing = {
      withSession: (from: string) => {
        const session = env.DB.withSession(from);
        return {
          prepare: (query: string) => session.prepare(query),
          batch: async () => {
            throw new Error("directory unavailable");
          },
          getBookmark: () => session.getBookmark(),
        };
      },
    } as unknown as D1Database;
    const res = await request<Org>("POST", "/internal/v1/orgs", {
      body: { name: unique("org"), database: "DB_ORG_2" },
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}` },
      bindings: { DB: failing },
    });
    expect(res.status).toBe(201);
    expect(await rowsIn("DB_ORG_2", "organizations", res.body.id)).toBe(1);
    expect(await directoryRow(res.body.id)).toBeNull();
    expect(errors.lines()).toContainEqual(
      expect.objectContaining({ msg: "directory side not written; the cron finishes it" }),
    );

    await runCron();
    expect(warnings.lines()).toContainEqual(
      expect.objectContaining({ msg: "finished organizations a crash left half-created" }),
    );

    expect(await directoryRow(res.body.id)).toEqual({ database: "DB_ORG_2" });
    const owner = await createCaller(res.body, "owner");
    expect((await request("GET", "/v1/orgs", { key: owner.key })).body).toMatchObject({ data: [res.body] });
  });

  it("an index row whose key was never written authenticates nothing", async () => {
    const { org } = await ownerIn("DB_ORG_2");
    const key = `dpk_${"x".repeat(43)}`;
    await env.DB.prepare(
      "INSERT OR IGNORE INTO api_key_index (key_hash, key_id, org_id, created_at) VALUES (?, ?, ?, ?)",
    )
      .bind(await hashKey(key), unique("key"), org.id, new Date().toISOString())
      .run();
    expect((await request("GET", "/v1/api-keys/current", { key })).status).toBe(401);
  });

  it("an organization whose database is unavailable fails alone, with a retryable 500", async () => {
    const id = newId();
    const key = `dpk_${crypto.randomUUID().replace(/-/g, "")}${"y".repeat(11)}`;
    const now = new Date().toISOString();
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO organizations (id, name, created_at, database) VALUES (?, ?, ?, 'DB_GONE')",
      ).bind(id, unique("org"), now),
      env.DB.prepare(
        "INSERT INTO api_key_index (key_hash, key_id, org_id, created_at) VALUES (?, ?, ?, ?)",
      ).bind(await hashKey(key), unique("key"), id, now),
    ]);
    const res = await request<{ code: string; message: string }>("GET", "/v1/projects", { key });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe("internal");
    expect(res.body.message).toMatch(/retry/i);
    const internalRes = await internal("POST", `/orgs/${id}/members`, { account_id: id, role: "owner" });
    expect(internalRes.status).toBe(500);

    const other = await ownerIn("DB_ORG_2");
    expect((await request("GET", "/v1/projects", { key: other.owner.key })).status).toBe(200);
  });

  it("an event of an organization in another database is delivered through the queue and its lane", async () => {
    const { owner } = await ownerIn("DB_ORG_2");
    const project = await createProject(owner);
    const bucket = unique("bucket");
    await integrate(project.id, hook(bucket), { changelog: true });
    const event = await internalOk<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "changelog.created",
      data: { changelog_id: unique("changelog"), title: "t", status: "published" },
    });
    await eventually(async () =>
      expect((await received(bucket)).map((r) => r.headers["webhook-id"])).toEqual([event.id]),
    );
    await onlyIn("DB_ORG_2", "events", event.id);
    await eventually(async () => {
      const row = await d1("DB_ORG_2")
        .prepare("SELECT status FROM webhook_deliveries WHERE event_id = ?")
        .bind(event.id)
        .first<{ status: string }>();
      expect(row?.status).toBe("succeeded");
    });
  });
});
