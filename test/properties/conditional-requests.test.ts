/**
 * ETag, If-None-Match and If-Match (API_CONTRACT §12) through the real Worker and real D1.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { etagOf } from "../../src/http/etag";
import { type ApiResponse, internalOk, request } from "../helpers/api";
import { createStream } from "../helpers/audit-streams";
import type { ErrorBody } from "../helpers/expect";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createComponent,
  createDeployment,
  createOrgWithOwner,
  createProject,
  createResource,
  createStack,
  unique,
} from "../helpers/factories";
import { createTrust } from "../helpers/oidc";
import { operations } from "../helpers/openapi";
import { sleep } from "../helpers/wait";

type Rec = { id: string } & Record<string, unknown>;

const STRONG = /^"[0-9a-f]{32}"$/;

/** Audit entries (API_CONTRACT §14) written by the requests with these x-request-ids. */
async function auditEntries(...requestIds: string[]): Promise<number> {
  const marks = requestIds.map(() => "?").join(", ");
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM audit_log WHERE request_id IN (${marks})`)
    .bind(...requestIds)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
const WEAK = /^W\/"[0-9a-f]{32}"$/;

/** One record of every kind, and the values of every path parameter of /v1. */
async function fixture() {
  const { org, owner } = await createOrgWithOwner();
  const admin = await createCaller(org, "admin");
  const project = await createProject(owner);
  const environmentId = project.default_environment_id;
  const member = await createCaller(org, "member", owner);
  await addProjectMember(owner, project.id, member, "contributor");
  const component = await createComponent(environmentId);
  const stack = await createStack(environmentId);
  const variable = await request<Rec>("POST", `/v1/environments/${environmentId}/variables`, {
    key: owner.key,
    body: { name: unique("V").replace(/-/g, "_"), type: "string", value: "v1" },
  });
  // Version 1 of the component's variables (the environment's is the create above).
  await request("POST", `/v1/components/${component.id}/variables`, {
    key: owner.key,
    body: { name: "VERSIONED", type: "string", value: "v" },
  });
  const integration = await request<Rec>("POST", `/v1/projects/${project.id}/notification-integrations`, {
    key: owner.key,
    body: { type: "webhook", url: "https://hooks.example.com/deploys" },
  });
  const resource = await createResource(stack.id);
  const deployment = await createDeployment(environmentId, [stack.id], {
    patch: [{ op: "add", path: "/a", value: 1 }],
  });
  const event = await internalOk<Rec>("POST", `/projects/${project.id}/events`, {
    type: "changelog.created",
    data: { title: "fixture" },
  });
  const trust = await createTrust(owner);
  const stream = await createStream(owner, "https://siem.example.com/in", { enabled: false });
  return {
    event,
    trust,
    stream,
    org,
    owner,
    admin,
    member,
    project,
    environmentId,
    component,
    stack,
    variable: variable.body,
    variableCreated: variable,
    integration: integration.body,
    integrationCreated: integration,
    resource,
    deployment,
  };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

/** A concrete path for a /v1 path template, from the fixture; throws for an unknown parameter. */
function concrete(template: string, f: Fixture): string {
  const byName: Record<string, string> = {
    org_id: f.org.id,
    project_id: f.project.id,
    member_id: f.member.accountId,
    integration_id: f.integration.id,
    variable_id: f.variable.id,
    environment_id: f.environmentId,
    component_id: f.component.id,
    stack_id: f.stack.id,
    event_id: String(f.event.id),
    version: "1",
  };
  return template.replace(/{(\w+)}/g, (_m, name: string) => {
    // An API key no request of this file uses: its record (`last_used_at`) stays as read.
    if (name === "id" && template.includes("api-keys")) return f.admin.keyId;
    if (name === "id" && template.includes("oidc-trusts")) return f.trust.id;
    if (name === "id" && template.includes("audit-streams")) return f.stream.id;
    if (name === "id") return template.includes("deployments") ? f.deployment.id : f.resource.id;
    const value = byName[name];
    if (!value) throw new Error(`no fixture value for {${name}} in ${template}: add it to fixture()`);
    return value;
  });
}

const get = (caller: Caller, path: string, headers: Record<string, string> = {}) =>
  request<Rec>("GET", path, { key: caller.key, headers });

function expectNotModified(res: ApiResponse<unknown>, etag: string) {
  expect(res.status).toBe(304);
  expect(res.raw).toBe("");
  expect(res.headers.get("etag")).toBe(etag);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.headers.get("x-ratelimit-remaining")).not.toBeNull();
  expect(res.headers.get("ratelimit")).toMatch(/^"\w+";r=\d+;t=\d+$/);
}

function expectIfMatchConflict(res: ApiResponse<unknown>) {
  expect(res.status).toBe(409);
  expect((res.body as ErrorBody).code).toBe("conflict");
  expect((res.body as ErrorBody).cause).toEqual([{ path: "header.if-match", message: expect.any(String) }]);
}

describe("ETag on every GET of /openapi.json", () => {
  it("single records carry a strong ETag, lists a weak one, and If-None-Match answers 304", async () => {
    const f = await fixture();
    // §29's `reset` counts down by the second while the fixture's deployment is in its window, so
    // its limits are read of an organization with none: a body that holds still between requests.
    const still = await createOrgWithOwner();
    const gets = (await operations()).filter((op) => op.method === "get" && op.path.startsWith("/v1/"));
    expect(gets.length).toBeGreaterThan(15);
    for (const op of gets) {
      const limits = op.path === "/v1/orgs/{org_id}/limits";
      const who = limits ? still.owner : f.owner;
      // A wait on the (queued) deployment answers after its timeout: the shortest, 1 s.
      const path = limits
        ? `/v1/orgs/${still.org.id}/limits`
        : concrete(op.path, f) + (op.path.endsWith("/wait") ? "?timeout=1" : "");
      const res = await get(who, path);
      expect(res.status, `${op.path} → ${res.raw}`).toBe(200);
      const etag = res.headers.get("etag");
      if (res.headers.get("cache-control")?.includes("no-store")) {
        // A revealed secret: no tag derived from it.
        expect(etag, op.path).toBeNull();
        continue;
      }
      const isList = Array.isArray((res.body as { data?: unknown }).data);
      expect(etag, op.path).toMatch(isList ? WEAK : STRONG);
      expectNotModified(await get(who, path, { "if-none-match": etag ?? "" }), etag ?? "");
      // HEAD is conditional as its GET is (RFC 9110 §13.1.2).
      const head = (headers: Record<string, string>) => request("HEAD", path, { key: who.key, headers });
      expectNotModified(await head({ "if-none-match": etag ?? "" }), etag ?? "");
      const fresh = await head({ "if-none-match": '"other"' });
      expect([fresh.status, fresh.headers.get("etag")], op.path).toEqual([200, etag]);
    }
  });
});

describe("ETag: the digest of the body as sent", () => {
  it("is made from the JSON text the route serialized, without reading the answer back", async () => {
    const f = await fixture();
    for (const [path, weak] of [
      [`/v1/projects/${f.project.id}`, false],
      ["/v1/projects?limit=5", true],
    ] as const) {
      // Only the Worker's own work between the request and its answer is watched: the body is
      // read (by the test) after the spies are gone. (Local D1 reads its own fetch answers' text,
      // so `text` is not watched; neither it nor anything else of the request clones an answer.)
      const reads = [vi.spyOn(Response.prototype, "clone"), vi.spyOn(Response.prototype, "arrayBuffer")];
      let res: Response;
      try {
        res = await exports.default.fetch(
          new Request(`http://api.test${path}`, { headers: { "x-api-key": f.owner.key } }),
        );
        for (const read of reads) expect(read, `${path}: ${read.getMockName()}`).not.toHaveBeenCalled();
      } finally {
        for (const read of reads) read.mockRestore();
      }
      expect(res.status).toBe(200);
      const body = await res.text();
      expect(res.headers.get("etag"), path).toBe(
        await etagOf(new TextEncoder().encode(body).buffer as ArrayBuffer, weak),
      );
    }
  });
});

describe("ETag: strong, the same for every caller, changing with every write", () => {
  it("is the same for two callers and equals the ETag of the 201 that created the record", async () => {
    const f = await fixture();
    const mine = await get(f.owner, `/v1/projects/${f.project.id}`);
    const theirs = await get(f.admin, `/v1/projects/${f.project.id}`);
    expect(mine.headers.get("etag")).toMatch(STRONG);
    expect(theirs.headers.get("etag")).toBe(mine.headers.get("etag"));
    const created = await request<Rec>("POST", "/v1/projects", {
      key: f.owner.key,
      body: { name: unique("p") },
    });
    const read = await get(f.owner, `/v1/projects/${created.body.id}`);
    expect(created.headers.get("etag")).toBe(read.headers.get("etag"));
    const variable = await get(f.owner, `/v1/variables/${f.variable.id}`);
    expect(f.variableCreated.headers.get("etag")).toBe(variable.headers.get("etag"));
    // The create's body carries the signing secret; its ETag is the record's, as GET shows it.
    const integration = await get(
      f.owner,
      `/v1/projects/${f.project.id}/notification-integrations/${f.integration.id}`,
    );
    expect(f.integrationCreated.headers.get("etag")).toBe(integration.headers.get("etag"));
  });

  it("every kind of write changes it, and the write's answer carries the new one", async () => {
    const f = await fixture();
    const writes: Array<{ path: string; write: () => Promise<ApiResponse<Rec>>; answerTagged: boolean }> = [
      {
        path: `/v1/projects/${f.project.id}`,
        write: () =>
          request("PUT", `/v1/projects/${f.project.id}`, {
            key: f.owner.key,
            body: { name: unique("renamed"), default_environment_id: f.environmentId },
          }),
        answerTagged: true,
      },
      {
        path: `/v1/projects/${f.project.id}/members/${f.member.accountId}`,
        write: () =>
          request("PUT", `/v1/projects/${f.project.id}/members/${f.member.accountId}`, {
            key: f.owner.key,
            body: { role: "viewer" },
          }),
        answerTagged: true,
      },
      {
        path: `/v1/projects/${f.project.id}/notification-integrations/${f.integration.id}`,
        write: () =>
          request("PATCH", `/v1/projects/${f.project.id}/notification-integrations/${f.integration.id}`, {
            key: f.owner.key,
            body: { configuration: { changelog: false } },
          }),
        answerTagged: true,
      },
      {
        path: `/v1/variables/${f.variable.id}`,
        write: () =>
          request("PUT", `/v1/variables/${f.variable.id}`, {
            key: f.owner.key,
            body: { name: f.variable.name, type: "string", value: "v2" },
          }),
        answerTagged: true,
      },
      {
        path: `/v1/deployments/${f.deployment.id}`,
        write: () => request("PATCH", `/v1/deployments/${f.deployment.id}/cancel`, { key: f.owner.key }),
        answerTagged: true,
      },
      {
        path: `/v1/resources/${f.resource.id}`,
        write: () => internal(`/resources/${f.resource.id}`, { status: "update_complete" }),
        answerTagged: false,
      },
      {
        path: `/v1/projects/${f.project.id}`,
        write: () => request("PATCH", `/v1/projects/${f.project.id}/disconnect`, { key: f.owner.key }),
        answerTagged: false,
      },
    ];
    for (const { path, write, answerTagged } of writes) {
      const before = await get(f.owner, path);
      const written = await write();
      expect(written.status, `${path}: ${written.raw}`).toBeLessThan(300);
      const after = await get(f.owner, path);
      expect(after.headers.get("etag"), path).toMatch(STRONG);
      expect(after.headers.get("etag"), path).not.toBe(before.headers.get("etag"));
      if (answerTagged) expect(written.headers.get("etag"), path).toBe(after.headers.get("etag"));
      // The old tag no longer matches: a conditional GET with it gets the record.
      const stale = await get(f.owner, path, { "if-none-match": before.headers.get("etag") ?? "" });
      expect(stale.status).toBe(200);
    }
  });
});

async function internal(path: string, body: Record<string, unknown>): Promise<ApiResponse<Rec>> {
  const body_ = await internalOk<Rec>("PATCH", path, body);
  return { status: 200, body: body_, headers: new Headers(), raw: JSON.stringify(body_) };
}

describe("If-None-Match", () => {
  it("matches weakly, with `*` and within a list; a list's weak tag works too", async () => {
    const f = await fixture();
    const path = `/v1/projects/${f.project.id}`;
    const etag = (await get(f.owner, path)).headers.get("etag") ?? "";
    expectNotModified(await get(f.owner, path, { "if-none-match": `W/${etag}` }), etag);
    expectNotModified(await get(f.owner, path, { "if-none-match": "*" }), etag);
    expectNotModified(await get(f.owner, path, { "if-none-match": `"nope", ${etag}` }), etag);
    expect((await get(f.owner, path, { "if-none-match": '"nope"' })).status).toBe(200);
    const list = await get(f.owner, "/v1/projects");
    const listTag = list.headers.get("etag") ?? "";
    expect(listTag).toMatch(WEAK);
    expectNotModified(await get(f.owner, "/v1/projects", { "if-none-match": listTag }), listTag);
    await createProject(f.owner);
    expect((await get(f.owner, "/v1/projects", { "if-none-match": listTag })).status).toBe(200);
  });

  it("a value that is neither `*` nor a list of ETags names none: the usual 200 (RFC 9110 §13.1.2)", async () => {
    const f = await fixture();
    const path = `/v1/projects/${f.project.id}`;
    const etag = (await get(f.owner, path)).headers.get("etag") ?? "";
    for (const value of ["abc", etag.slice(1, -1), '"unterminated', `${etag} junk`, ""]) {
      const res = await get(f.owner, path, { "if-none-match": value });
      expect(res.status, value).toBe(200);
      expect(res.headers.get("etag"), value).toBe(etag);
      expect((res.body as unknown as Rec).id, value).toBe(f.project.id);
    }
  });
});

/** Waits until the queue consumer has finished the project's disconnect. */
async function disconnected(f: Fixture): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await get(f.owner, `/v1/projects/${f.project.id}`);
    if (res.body.connection_status === "disconnected") return;
    await sleep(100);
  }
  throw new Error("the disconnect never finished");
}

type ConditionalWrite = {
  name: string;
  method: string;
  path: string;
  read: string;
  body: () => unknown;
  before?: () => Promise<void>;
};

/** Every write of a record that honours If-Match: its path, method, body and the GET path. */
function conditionalWrites(f: Fixture): ConditionalWrite[] {
  return [
    {
      name: "project replace",
      method: "PUT",
      path: `/v1/projects/${f.project.id}`,
      read: `/v1/projects/${f.project.id}`,
      body: () => ({ name: unique("p"), default_environment_id: f.environmentId }),
    },
    {
      name: "member replace",
      method: "PUT",
      path: `/v1/projects/${f.project.id}/members/${f.member.accountId}`,
      read: `/v1/projects/${f.project.id}/members/${f.member.accountId}`,
      body: () => ({ role: "viewer" }),
    },
    {
      name: "integration update",
      method: "PATCH",
      path: `/v1/projects/${f.project.id}/notification-integrations/${f.integration.id}`,
      read: `/v1/projects/${f.project.id}/notification-integrations/${f.integration.id}`,
      body: () => ({ url: `https://hooks.example.com/${unique("h")}` }),
    },
    {
      name: "variable replace",
      method: "PUT",
      path: `/v1/variables/${f.variable.id}`,
      read: `/v1/variables/${f.variable.id}`,
      body: () => ({ name: f.variable.name, type: "string", value: unique("v") }),
    },
    {
      name: "deployment cancel",
      method: "PATCH",
      path: `/v1/deployments/${f.deployment.id}/cancel`,
      read: `/v1/deployments/${f.deployment.id}`,
      body: () => undefined,
    },
    {
      name: "project disconnect",
      method: "PATCH",
      path: `/v1/projects/${f.project.id}/disconnect`,
      read: `/v1/projects/${f.project.id}`,
      body: () => undefined,
    },
    {
      // A POST that writes the protection record (API_CONTRACT §26, the preamble of part four).
      name: "environment lock",
      method: "POST",
      path: `/v1/environments/${f.environmentId}/lock`,
      read: `/v1/environments/${f.environmentId}/protection`,
      body: () => ({ reason: unique("freeze") }),
    },
    {
      name: "member remove",
      method: "DELETE",
      path: `/v1/projects/${f.project.id}/members/${f.member.accountId}`,
      read: `/v1/projects/${f.project.id}/members/${f.member.accountId}`,
      body: () => undefined,
    },
    {
      name: "variable delete",
      method: "DELETE",
      path: `/v1/variables/${f.variable.id}`,
      read: `/v1/variables/${f.variable.id}`,
      body: () => undefined,
    },
    {
      name: "project delete",
      method: "DELETE",
      path: `/v1/projects/${f.project.id}`,
      read: `/v1/projects/${f.project.id}`,
      body: () => undefined,
      // The disconnect above is finished by the queue consumer, which changes the project.
      before: () => disconnected(f),
    },
  ];
}

describe("If-Match", () => {
  it("every write that honours it publishes it: the If-Match parameter in /openapi.json", async () => {
    const f = await fixture();
    const ops = await operations();
    for (const w of conditionalWrites(f)) {
      const op = ops.find(
        (o) =>
          o.method === w.method.toLowerCase() &&
          new RegExp(`^${o.path.replace(/{\w+}/g, "[^/]+")}$`).test(w.path),
      );
      expect(op, `${w.name}: ${w.method} ${w.path} is in /openapi.json`).toBeDefined();
      const parameters = (op?.operation.parameters ?? []) as { in?: string; name?: string }[];
      expect(
        parameters.some((p) => p.in === "header" && p.name?.toLowerCase() === "if-match"),
        `${w.name}: ${w.method} ${w.path}`,
      ).toBe(true);
    }
  });

  it("a stale, weak or unknown ETag is 409 on header.if-match and changes nothing; the current one, `*` or a list with it succeeds", async () => {
    const f = await fixture();
    for (const w of conditionalWrites(f)) {
      await w.before?.();
      let requestId = "";
      const send = (ifMatch: string) => {
        requestId = unique("if-match");
        return request<Rec>(w.method, w.path, {
          key: f.owner.key,
          body: w.body(),
          headers: { "if-match": ifMatch, "x-request-id": requestId },
        });
      };
      const before = await get(f.owner, w.read);
      const etag = before.headers.get("etag") ?? "";
      for (const bad of ['"0123456789abcdef0123456789abcdef"', `W/${etag}`]) {
        expectIfMatchConflict(await send(bad));
        const after = await get(f.owner, w.read);
        expect(after.raw, w.name).toBe(before.raw);
        // Refused: no change, so no audit entry either.
        expect(await auditEntries(requestId), w.name).toBe(0);
      }
      const ok = await send(w.name.includes("replace") ? `"x", ${etag}` : etag);
      expect(ok.status, `${w.name}: ${ok.raw}`).toBeLessThan(300);
      expect(await auditEntries(requestId), w.name).toBe(1);
      if (w.method !== "DELETE") {
        // The tag it held is stale now.
        expectIfMatchConflict(await send(etag));
        const current = (await get(f.owner, w.read)).headers.get("etag") ?? "";
        if (w.name.includes("replace") || w.name.includes("update")) {
          expect((await send("*")).status, w.name).toBe(200);
          expect((await send(`"a", "b"`)).status, w.name).toBe(409);
          expect(current).toMatch(STRONG);
        }
      } else {
        // A record that does not exist is 404 as usual, whatever If-Match says.
        expect((await send(etag)).status, w.name).toBe(404);
        expect((await send("*")).status, w.name).toBe(404);
      }
    }
  });

  it("a value that is neither `*` nor a list of ETags names none: 409 on header.if-match, nothing changes (RFC 9110 §13.1.1)", async () => {
    const f = await fixture();
    const path = `/v1/variables/${f.variable.id}`;
    const etag = (await get(f.owner, path)).headers.get("etag") ?? "";
    for (const value of ["not-a-tag", etag.slice(1, -1), `${etag} junk`, '"unterminated']) {
      const res = await request("DELETE", path, { key: f.owner.key, headers: { "if-match": value } });
      expect(res.status, value).toBe(409);
      expect((res.body as ErrorBody).cause, value).toEqual([
        { path: "header.if-match", message: expect.any(String) },
      ]);
    }
    expect((await get(f.owner, path)).status).toBe(200);
    // A create has no record to hold to: the header is not its concern (§12: PUT, PATCH, DELETE).
    const created = await request<Rec>("POST", "/v1/projects", {
      key: f.owner.key,
      headers: { "if-match": "not-a-tag" },
      body: { name: unique("im") },
    });
    expect(created.status).toBe(201);
  });

  it("of two writers holding the same ETag exactly one wins", async () => {
    for (let round = 0; round < 2; round++) {
      const f = await fixture();
      for (const w of conditionalWrites(f)) {
        await w.before?.();
        const etag = (await get(f.owner, w.read)).headers.get("etag") ?? "";
        const ids = [unique("race"), unique("race")];
        const [a, b] = await Promise.all(
          ids.map((id) =>
            request(w.method, w.path, {
              key: f.owner.key,
              body: w.body(),
              headers: { "if-match": etag, "x-request-id": id },
            }),
          ),
        );
        const statuses = [a?.status, b?.status].sort();
        const won = statuses.filter((s) => s !== undefined && s < 300).length;
        expect(won, `${w.name}: ${a?.raw} / ${b?.raw}`).toBe(1);
        // The winner's change has its one entry; the loser wrote none.
        expect(await auditEntries(...ids), w.name).toBe(1);
        const loser = [a, b].find((r) => r && r.status >= 300);
        // A delete's loser may find the record already gone (404); every other loser is 409.
        if (w.method === "DELETE" && loser?.status === 404) continue;
        if (loser) expectIfMatchConflict(loser);
      }
    }
  });
});
