/**
 * The audit log (API_CONTRACT §14) beyond the guard of guard.test.ts: refused requests
 * write nothing, an entry and its change commit together (a reveal's entry before its answer),
 * an entry fits its row, immutability, retention. The two lists:
 * test/routes/audit-log/listOrgAuditLog.test.ts and listProjectAuditLog.test.ts.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import { request } from "../../helpers/api";
import { call, type AuditList as List, newRequestId, rowsOf } from "../../helpers/audit-log";
import { RETENTION_CRON, runCron } from "../../helpers/cron";
import {
  addProjectMember,
  createApiKey,
  createCaller,
  createOrgWithOwner,
  createProject,
  createProjectWithStack,
  revokeKey,
  unique,
} from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { operations } from "../../helpers/openapi";

describe("no entry without its change", () => {
  it("a refused request (400, 403, 404, 409) writes no entry", async () => {
    const { org, owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const refused: Array<[string, string, string, unknown, number]> = [
      [owner.key, "POST", "/v1/projects", { name: "" }, 400],
      [owner.key, "POST", "/v1/projects", { name: project.name }, 409],
      [viewer.key, "DELETE", `/v1/projects/${project.id}`, undefined, 403],
      [viewer.key, "POST", "/v1/projects", { name: unique("p") }, 403],
      [owner.key, "DELETE", "/v1/projects/7Hq3VnT5m2WcXbQ9pLk4Rz", undefined, 404],
      [
        viewer.key,
        "POST",
        `/v1/environments/${project.default_environment_id}/variables`,
        { name: "X", type: "string", value: "v" },
        403,
      ],
      [owner.key, "PATCH", `/v1/projects/${project.id}/members/${owner.accountId}`, undefined, 404],
      [owner.key, "DELETE", `/v1/projects/${project.id}/members/${owner.accountId}`, undefined, 409],
    ];
    for (const [key, method, path, body, status] of refused) {
      const requestId = newRequestId();
      const res = await request(method, path, { key, body, headers: { "x-request-id": requestId } });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(await rowsOf(requestId), `${method} ${path}`).toEqual([]);
    }
    // A second disconnect (409) and a second revoke (nothing left to change) write nothing either.
    await request("PATCH", `/v1/projects/${project.id}/disconnect`, { key: owner.key });
    const again = newRequestId();
    expect(
      (
        await request("PATCH", `/v1/projects/${project.id}/disconnect`, {
          key: owner.key,
          headers: { "x-request-id": again },
        })
      ).status,
    ).toBe(409);
    expect(await rowsOf(again)).toEqual([]);
    const key = await createApiKey(owner);
    await revokeKey(key.keyId);
    const revokeAgain = newRequestId();
    const res = await request("DELETE", `/internal/v1/api-keys/${key.keyId}`, {
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, "x-request-id": revokeAgain },
    });
    expect(res.status).toBe(204);
    expect(await rowsOf(revokeAgain)).toEqual([]);
  });
});

describe("an entry and its change commit together", () => {
  // A refused audit write fails its request as an unhandled error, logged by design.
  captureLogs("error");
  // A trigger that refuses the audit entries of one request id: the entry's write fails.
  const FAIL_ID = "audit-write-fails";
  afterEach(async () => {
    await env.DB.prepare("DROP TRIGGER IF EXISTS audit_fail").run();
  });
  const failAuditWrites = () =>
    env.DB.prepare(
      `CREATE TRIGGER audit_fail BEFORE INSERT ON audit_log WHEN NEW.request_id = '${FAIL_ID}' BEGIN SELECT RAISE(ABORT, 'audit refused'); END`,
    ).run();

  it("when the entry cannot be written, the change does not happen", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    await failAuditWrites();
    const name = unique("never");
    const create = await request("POST", "/v1/projects", {
      key: owner.key,
      body: { name },
      headers: { "x-request-id": FAIL_ID },
    });
    expect(create.status).toBe(500);
    const del = await request("DELETE", `/v1/projects/${project.id}`, {
      key: owner.key,
      headers: { "x-request-id": FAIL_ID },
    });
    expect(del.status).toBe(500);
    const list = await request<{ data: Array<{ name: string }> }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data.map((p) => p.name)).toEqual([project.name]);
  });

  it("a reveal writes its entry before answering: no entry, no value", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const value = `revealed-${crypto.randomUUID()}`;
    const created = await request<{ id: string }>(
      "POST",
      `/v1/environments/${project.default_environment_id}/variables`,
      {
        key: owner.key,
        body: { name: "SECRET", type: "secret", value },
      },
    );
    await failAuditWrites();
    const refused = await request("GET", `/v1/variables/${created.body.id}/value`, {
      key: owner.key,
      headers: { "x-request-id": FAIL_ID },
    });
    expect(refused.status).toBe(500);
    expect(refused.raw).not.toContain(value);
    const requestId = newRequestId();
    const shown = await request<{ value: string }>("GET", `/v1/variables/${created.body.id}/value`, {
      key: owner.key,
      headers: { "x-request-id": requestId },
    });
    expect(shown.body.value).toBe(value);
    const [entry] = await rowsOf(requestId);
    expect(entry).toMatchObject({
      action: "revealVariable",
      target_type: "variable",
      target_id: created.body.id,
      changes: null,
    });
  });
});

describe("an entry fits its row (D1: 2,000,000 bytes)", () => {
  const MAX = 32_768;
  const kept = (prefix: string, length: number) =>
    `${(prefix + "x".repeat(length - prefix.length)).slice(0, MAX)}…[+${length - MAX} characters]`;
  const long = (prefix: string, length: number) => prefix + "x".repeat(length - prefix.length);
  const entryBytes = async (requestId: string) => {
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    return new TextEncoder().encode(String(rows[0]?.changes)).length;
  };

  it("a resource report replacing two ~500,000-character strings keeps the first 32,768 characters of each side", async () => {
    const { stack } = await createProjectWithStack();
    const created = await call<{ id: string }>("POST", `/internal/v1/stacks/${stack.id}/resources`, {
      admin: true,
      body: {
        resource_type: "t",
        physical_id: long("p", 500_000),
        status: "create_in_progress",
        status_reason: long("r", 500_000),
      },
    });
    expect(created.status, created.raw.slice(0, 300)).toBe(201);
    const createChanges = JSON.parse(String((await rowsOf(created.requestId))[0]?.changes));
    expect(createChanges.physical_id).toEqual({ from: null, to: kept("p", 500_000) });

    const reported = await call("PATCH", `/internal/v1/resources/${created.body.id}`, {
      admin: true,
      body: { status: "create_complete", physical_id: long("P", 480_000), status_reason: long("R", 480_000) },
    });
    expect(reported.status, reported.raw.slice(0, 300)).toBe(200);
    const changes = JSON.parse(String((await rowsOf(reported.requestId))[0]?.changes));
    expect(changes.physical_id).toEqual({ from: kept("p", 500_000), to: kept("P", 480_000) });
    expect(changes.status_reason).toEqual({ from: kept("r", 500_000), to: kept("R", 480_000) });
    expect(await entryBytes(reported.requestId)).toBeLessThan(300_000);
    // The resource itself keeps every character.
    expect((reported.body as { physical_id: string }).physical_id).toBe(long("P", 480_000));

    // A string of exactly 32,768 characters is kept whole.
    const whole = await call("PATCH", `/internal/v1/resources/${created.body.id}`, {
      admin: true,
      body: { status: "update_in_progress", status_reason: "w".repeat(MAX) },
    });
    expect(whole.status).toBe(200);
    const wholeChanges = JSON.parse(String((await rowsOf(whole.requestId))[0]?.changes));
    expect(wholeChanges.status_reason.to).toBe("w".repeat(MAX));
  });

  it("a project replace whose icon is ~500,000 characters before and after", async () => {
    const { owner } = await createOrgWithOwner();
    const first = long("url:data:image/png;base64,", 500_000);
    const created = await call<{ id: string; name: string; default_environment_id: string }>(
      "POST",
      "/v1/projects",
      { key: owner.key, body: { name: unique("icon"), icon: first } },
    );
    expect(created.status).toBe(201);
    const second = long("url:data:image/svg+xml;base64,", 490_000);
    const replaced = await call("PUT", `/v1/projects/${created.body.id}`, {
      key: owner.key,
      body: {
        name: created.body.name,
        default_environment_id: created.body.default_environment_id,
        icon: second,
      },
    });
    expect(replaced.status).toBe(200);
    const changes = JSON.parse(String((await rowsOf(replaced.requestId))[0]?.changes));
    expect(changes.icon).toEqual({
      from: kept("url:data:image/png;base64,", 500_000),
      to: kept("url:data:image/svg+xml;base64,", 490_000),
    });
    expect(await entryBytes(replaced.requestId)).toBeLessThan(200_000);
  });
});

describe("entries are immutable and kept 400 days", () => {
  // The cron logs a summary of each run.
  captureLogs("log");
  it("no operation changes or deletes an entry", async () => {
    const auditOps = (await operations()).filter((op) => op.path.includes("/audit-log"));
    expect(auditOps.length).toBe(2);
    expect(auditOps.every((op) => op.method === "get")).toBe(true);
  });

  it("the daily cron removes entries older than 400 days and keeps the rest", async () => {
    const { org, owner } = await createOrgWithOwner();
    const day = 86_400_000;
    const insert = (id: string, ageDays: number) =>
      env.DB.prepare(
        "INSERT INTO audit_log (id, org_id, project_id, action, target_type, target_id, actor_type, request_id, created_at, sequence) VALUES (?1, ?2, NULL, 'test', 'x', 'x', 'admin', 'r', ?3, (SELECT coalesce(max(sequence), 0) + 1 FROM audit_log WHERE org_id = ?2))",
      )
        .bind(id, org.id, new Date(Date.now() - ageDays * day).toISOString())
        .run();
    // Real identifiers: the listed entry is checked against /openapi.json, which publishes the ID pattern.
    const old = newId();
    const kept = newId();
    await insert(old, 401);
    await insert(kept, 399);
    // The five-minute cron is the event sweep: it leaves the audit log alone.
    await runCron();
    const exists = async (id: string) =>
      (await env.DB.prepare("SELECT id FROM audit_log WHERE id = ?").bind(id).first()) !== null;
    expect(await exists(old)).toBe(true);
    await runCron(RETENTION_CRON);
    expect(await exists(old)).toBe(false);
    expect(await exists(kept)).toBe(true);
    const listed = await request<List>("GET", `/v1/orgs/${org.id}/audit-log?action=test`, { key: owner.key });
    expect(listed.body.data.map((e) => e.id)).toEqual([kept]);
  });

  it("keeps an organization's newest entry however old, so its sequence goes on without a repeat (§30)", async () => {
    const { org, owner } = await createOrgWithOwner();
    const day = 86_400_000;
    // Every entry of the organization more than 400 days old (its own creation's and its key's too).
    await env.DB.prepare("UPDATE audit_log SET created_at = ? WHERE org_id = ?")
      .bind(new Date(Date.now() - 500 * day).toISOString(), org.id)
      .run();
    const before = await env.DB.prepare("SELECT max(sequence) AS n FROM audit_log WHERE org_id = ?")
      .bind(org.id)
      .first<{ n: number }>();
    await runCron(RETENTION_CRON);
    const left = await env.DB.prepare("SELECT sequence FROM audit_log WHERE org_id = ?")
      .bind(org.id)
      .all<{ sequence: number }>();
    expect(left.results.map((r) => r.sequence)).toEqual([before?.n]);
    await request("POST", "/v1/projects", { key: owner.key, body: { name: "after-the-purge" } });
    const listed = await request<List & { data: { sequence: number }[] }>(
      "GET",
      `/v1/orgs/${org.id}/audit-log`,
      {
        key: owner.key,
      },
    );
    expect(listed.body.data.map((e) => e.sequence)).toEqual([(before?.n ?? 0) + 1, before?.n]);
  });
});
