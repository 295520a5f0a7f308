/** createAuditStream: POST /v1/orgs/{org_id}/audit-streams (API_CONTRACT §30). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import {
  batches,
  createStream,
  eventually,
  readStream,
  receiverBucket,
  verifiesBatch,
} from "../../helpers/audit-streams";
import { expectError, NEW_ID, TS } from "../../helpers/expect";
import { createApiKey, createCaller, createOrgWithOwner, createProject } from "../../helpers/factories";
import { expectLimitRefusal, setLimits } from "../../helpers/limits";
import { runCommonRouteTests } from "../../helpers/security";
import { allowTheLocalReceiver } from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("POST /v1/orgs/{org_id}/audit-streams", () => {
  it("its entry's changes are the record as created, from null, every field but the secret (§14)", async () => {
    const { org, owner } = await createOrgWithOwner();
    await createProject(owner);
    for (const from of ["now", "start"] as const) {
      const res = await request<Record<string, unknown>>("POST", `/v1/orgs/${org.id}/audit-streams`, {
        key: owner.key,
        body: { name: `SIEM ${from}`, url: receiverBucket().url, enabled: false, from },
      });
      expect(res.status, res.raw).toBe(201);
      const log = await request<{ data: { changes: Record<string, unknown> }[] }>(
        "GET",
        `/v1/orgs/${org.id}/audit-log?action=createAuditStream&limit=1`,
        { key: owner.key },
      );
      const { signing_secret: _secret, last_error: _none, ...shown } = res.body;
      expect(log.body.data[0]?.changes).toEqual(
        Object.fromEntries(Object.entries(shown).map(([field, to]) => [field, { from: null, to }])),
      );
    }
  });

  it("answers 201 with the stream, its signing secret once, Location and Cache-Control: no-store", async () => {
    const { org, owner } = await createOrgWithOwner();
    const { url } = receiverBucket();
    const res = await request<Record<string, unknown>>("POST", `/v1/orgs/${org.id}/audit-streams`, {
      key: owner.key,
      body: { name: "SIEM", url },
    });
    expect(res.status, res.raw).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      org_id: org.id,
      name: "SIEM",
      url,
      enabled: true,
      delivered_through: expect.any(Number),
      pending: 1,
      last_error: null,
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(res.headers.get("location")).toBe(`/v1/audit-streams/${res.body.id}`);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const { signing_secret: _secret, ...record } = res.body;
    const read = await request("GET", `/v1/audit-streams/${res.body.id}`, { key: owner.key });
    expect(read.body).toEqual({
      ...record,
      pending: expect.any(Number),
      delivered_through: expect.any(Number),
    });
    expect(read.headers.get("etag")).toBeTruthy();
    expect(JSON.stringify(read.body)).not.toContain("whsec_");
  });

  it("from now (default) starts at the entry of its own creation; from start at 1", async () => {
    const { owner } = await createOrgWithOwner();
    await createProject(owner);
    const now = await createStream(owner, receiverBucket().url, { enabled: false });
    const log = await request<{ data: { sequence: number; action: string; target: { id: string } }[] }>(
      "GET",
      `/v1/orgs/${owner.orgId}/audit-log?after_sequence=0&limit=240`,
      { key: owner.key },
    );
    const own = log.body.data.find((e) => e.action === "createAuditStream" && e.target.id === now.id);
    expect(now.delivered_through).toBe((own?.sequence ?? 0) - 1);
    const start = await createStream(owner, receiverBucket().url, { enabled: false, from: "start" });
    expect(start.delivered_through).toBe(0);
    expect(start.pending).toBe((own?.sequence ?? 0) + 1);
  });

  it("sends its organization's entries to the receiver: NDJSON, each line the audit log's record, signed", async () => {
    const { owner } = await createOrgWithOwner();
    const { bucket, url } = receiverBucket();
    const stream = await createStream(owner, url);
    await createProject(owner);
    const got = await eventually(
      () => batches(bucket),
      (list) => list.flatMap((b) => b.entries).length >= 2,
    );
    const entries = got.flatMap((b) => b.entries);
    expect(entries.map((e) => e.action)).toEqual(["createAuditStream", "createProject"]);
    const first = got[0];
    expect(first?.headers["content-type"]).toBe("application/x-ndjson");
    expect(first?.id).toBe(`${stream.id}.${entries[0]?.sequence}`);
    expect(first?.body.endsWith("\n")).toBe(true);
    // Standard Webhooks: the receiver signs `id.timestamp.body` with the stream's secret and compares
    // (the library's `verify` parses the body as one JSON document, which NDJSON is not).
    expect(verifiesBatch(stream.signing_secret, first)).toBe(true);
    // Each line is the entry exactly as the audit log API serves it.
    const listed = await request<{ data: unknown[] }>(
      "GET",
      `/v1/orgs/${owner.orgId}/audit-log?after_sequence=${stream.delivered_through}`,
      { key: owner.key },
    );
    const lines = got.flatMap((b) => b.body.split("\n").filter(Boolean));
    expect(lines).toEqual(listed.body.data.map((e) => JSON.stringify(e)));
    const done = await eventually(
      () => readStream(owner, stream.id),
      (s) => s.pending === 0,
    );
    expect(done.delivered_through).toBe(entries.at(-1)?.sequence);
  });

  it("refuses a url the integrations' rules refuse, a bad name, an unknown field, a bad from", async () => {
    const { org, owner } = await createOrgWithOwner();
    const post = (body: unknown) =>
      request("POST", `/v1/orgs/${org.id}/audit-streams`, { key: owner.key, body });
    expectError(await post({ name: "s", url: "ftp://x.example.com/" }), 400, "bad_input", "url");
    expectError(await post({ name: "s", url: "not a url" }), 400, "bad_input", "url");
    expectError(await post({ name: "", url: receiverBucket().url }), 400, "bad_input", "name");
    expectError(await post({ name: "x".repeat(101), url: receiverBucket().url }), 400, "bad_input", "name");
    expectError(
      await post({ name: "s", url: receiverBucket().url, from: "later" }),
      400,
      "bad_input",
      "from",
    );
    expectError(await post({ name: "s", url: receiverBucket().url, extra: 1 }), 400, "bad_input", "extra");
    expectError(await post({ url: receiverBucket().url }), 400, "bad_input", "name");
  });

  it("counts against the audit_streams limit", async () => {
    const { org, owner } = await createOrgWithOwner();
    await setLimits(org.id, { audit_streams: 1 });
    await createStream(owner, receiverBucket().url, { enabled: false });
    const res = await request("POST", `/v1/orgs/${org.id}/audit-streams`, {
      key: owner.key,
      body: { name: "two", url: receiverBucket().url },
    });
    expectLimitRefusal(res, "audit_streams");
  });

  it("who may: org owner and admin; a member and a key restricted to projects are 403 unauthorized; audit:write", async () => {
    const { org, owner } = await createOrgWithOwner();
    const admin = await createCaller(org, "admin");
    const member = await createCaller(org, "member", owner);
    const project = await createProject(owner);
    const restricted = await createApiKey(owner, { project_ids: [project.id] });
    const readOnly = await createApiKey(owner, { scopes: ["audit:read"] });
    const post = (key: string) =>
      request("POST", `/v1/orgs/${org.id}/audit-streams`, {
        key,
        body: { name: "s", url: receiverBucket().url, enabled: false },
      });
    expect((await post(admin.key)).status).toBe(201);
    expectError(await post(member.key), 403, "unauthorized");
    expectError(await post(restricted.key), 403, "unauthorized");
    const scoped = expectError(await post(readOnly.key), 403, "forbidden");
    expect(scoped.message).toContain("audit:write");
  });

  runCommonRouteTests("POST /v1/orgs/{org_id}/audit-streams", async () => {
    const { org, owner } = await createOrgWithOwner();
    return {
      method: "POST",
      path: `/v1/orgs/${org.id}/audit-streams`,
      body: { name: "s", url: "https://siem.example.com/in", enabled: false },
      caller: owner,
    };
  });
});
