import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import type { CreatedIntegration, IntegrationRecord } from "../src/schemas/integration";
import { internal, request } from "./helpers/api";
import { type ErrorBody, TS } from "./helpers/expect";
import {
  addProjectMember,
  type Caller,
  createCaller,
  createOwnedProject,
  createProject,
} from "./helpers/factories";
import { runCommonRouteTests } from "./helpers/security";

// Reads carry no secret; the create response adds `signing_secret`.
type Integration = IntegrationRecord & Partial<Pick<CreatedIntegration, "signing_secret">>;

const URL_OK = "https://hooks.example.com/deploys";
const ALL_OFF = {
  deployments_failed: false,
  deployments_in_progress: false,
  deployments_succeeded: false,
  changelog: false,
  promotions: false,
  services_in_alarm: false,
  services_ok: false,
};

beforeAll(() => {
  // This file checks the production URL rules.
  env.ALLOW_INSECURE_WEBHOOKS = "false";
});

const base = (projectId: string) => `/v1/projects/${projectId}/notification-integrations`;

async function create(caller: Caller, projectId: string, body: Record<string, unknown> = {}) {
  const res = await request<Integration>("POST", base(projectId), {
    key: caller.key,
    body: { type: "webhook", url: URL_OK, configuration: { deployments_failed: true }, ...body },
  });
  if (res.status !== 201) throw new Error(`create integration → ${res.status} ${res.raw}`);
  return res.body;
}

describe("POST /v1/projects/{project_id}/notification-integrations", () => {
  it("creates a webhook with every flag present and shows the signing secret once", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<Integration>("POST", base(project.id), {
      key: owner.key,
      body: { type: "webhook", url: URL_OK, configuration: { changelog: true, services_ok: true } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      project_id: project.id,
      type: "webhook",
      url: URL_OK,
      configuration: { ...ALL_OFF, changelog: true, services_ok: true },
    });
    expect(res.body.id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    expect(res.body.created_at).toMatch(TS);
    expect(res.body.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const got = await request<Integration>("GET", `${base(project.id)}/${res.body.id}`, { key: owner.key });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("signing_secret");
    expect(got.raw).not.toContain(res.body.signing_secret);
    const list = await request<{ data: Integration[]; has_more: boolean }>("GET", base(project.id), {
      key: owner.key,
    });
    expect(list.body).toEqual({ data: [got.body], has_more: false });
    expect(list.raw).not.toContain("whsec_");
  });

  it("a missing configuration means every flag off; each secret is different", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await create(owner, project.id, { configuration: undefined });
    const b = await create(owner, project.id);
    expect(a.configuration).toEqual(ALL_OFF);
    expect(a.signing_secret).not.toBe(b.signing_secret);
  });

  it.each([
    [{ type: "slack", url: URL_OK }, "type"],
    [{ type: "email", url: URL_OK }, "type"],
    [{ url: URL_OK }, "type"],
    [{ type: "webhook" }, "url"],
    [{ type: "webhook", url: 5 }, "url"],
    [{ type: "webhook", url: URL_OK, configuration: { changelog: "yes" } }, "configuration.changelog"],
    [{ type: "webhook", url: URL_OK, configuration: { unknown_flag: true } }, "configuration.unknown_flag"],
    [{ type: "webhook", url: URL_OK, extra: 1 }, "extra"],
    [{ type: "webhook", url: "http://hooks.example.com/x" }, "url"],
    [{ type: "webhook", url: "https://localhost/x" }, "url"],
    [{ type: "webhook", url: "https://127.0.0.1/x" }, "url"],
    [{ type: "webhook", url: "https://2130706433/x" }, "url"],
    [{ type: "webhook", url: "https://[::1]/x" }, "url"],
    [{ type: "webhook", url: "https://10.0.0.8/x" }, "url"],
    [{ type: "webhook", url: "https://169.254.169.254/x" }, "url"],
    [{ type: "webhook", url: "https://good.com@127.0.0.1/x" }, "url"],
    [{ type: "webhook", url: "gopher://hooks.example.com/x" }, "url"],
  ])("refuses %j with 400 bad_input at %s, creating nothing", async (body, path) => {
    const { owner, project } = await createOwnedProject();
    const res = await request<ErrorBody>("POST", base(project.id), { key: owner.key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
    const list = await request<{ data: unknown[] }>("GET", base(project.id), { key: owner.key });
    expect(list.body.data).toEqual([]);
  });

  it("refuses a body that is not JSON", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<ErrorBody>("POST", base(project.id), {
      key: owner.key,
      rawBody: "type=webhook",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
  });

  it("needs contributor or above: a viewer is 403 forbidden, a contributor may", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await createCaller(org, "member", owner);
    const contributor = await createCaller(org, "member", owner);
    const outsider = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    await addProjectMember(owner, project.id, contributor, "contributor");
    const body = { type: "webhook", url: URL_OK };
    const asViewer = await request<ErrorBody>("POST", base(project.id), { key: viewer.key, body });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.code).toBe("forbidden");
    expect((await request("GET", base(project.id), { key: viewer.key })).status).toBe(200);
    const asOutsider = await request<ErrorBody>("POST", base(project.id), { key: outsider.key, body });
    expect(asOutsider.status).toBe(404);
    expect((await request("POST", base(project.id), { key: contributor.key, body })).status).toBe(201);
  });

  it("an unknown project is 404; a malformed project ID is 400", async () => {
    const { owner } = await createOwnedProject();
    const body = { type: "webhook", url: URL_OK };
    const missing = await request<ErrorBody>("POST", base("7Hq3VnT5m2WcXbQ9pLk4Rz"), {
      key: owner.key,
      body,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    expect((await request("POST", base("nope"), { key: owner.key, body })).status).toBe(400);
  });

  runCommonRouteTests("POST integration", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "POST", path: base(project.id), body: { type: "webhook", url: URL_OK }, caller: owner };
  });
});

describe("GET one / list", () => {
  it("an integration of another project of the same org is 404 under this project", async () => {
    const { owner, project } = await createOwnedProject();
    const other = await createProject(owner);
    const integration = await create(owner, other.id);
    const res = await request<ErrorBody>("GET", `${base(project.id)}/${integration.id}`, { key: owner.key });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe("not_found");
  });

  it("lists the project's integrations with the shared pagination (newest first by default)", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await create(owner, project.id);
    const b = await create(owner, project.id);
    const c = await create(owner, project.id);
    const list = await request<{ data: Integration[]; has_more: boolean }>("GET", base(project.id), {
      key: owner.key,
    });
    expect(list.body).toEqual({
      data: [c, b, a].map((i) => expect.objectContaining({ id: i.id })),
      has_more: false,
    });
    expect(list.body.data.every((i) => !("signing_secret" in i))).toBe(true);
    const oldest = await request<{ data: Integration[] }>("GET", `${base(project.id)}?sort_by=created_at`, {
      key: owner.key,
    });
    expect(oldest.body.data.map((i) => i.id)).toEqual([a.id, b.id, c.id]);
    const first = await request<{ data: Integration[]; has_more: boolean; next_page: string }>(
      "GET",
      `${base(project.id)}?limit=2`,
      { key: owner.key },
    );
    expect([first.body.data.map((i) => i.id), first.body.has_more]).toEqual([[c.id, b.id], true]);
    const rest = await request<{ data: Integration[]; has_more: boolean }>(
      "GET",
      `${base(project.id)}?limit=2&after=${encodeURIComponent(first.body.next_page)}`,
      { key: owner.key },
    );
    expect([rest.body.data.map((i) => i.id), rest.body.has_more]).toEqual([[a.id], false]);
    for (const bad of ["limit=0", "limit=abc", "sort_by=name", "after=%21%21"]) {
      const res = await request<{ code: string }>("GET", `${base(project.id)}?${bad}`, { key: owner.key });
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, "bad_input"]);
    }
  });

  runCommonRouteTests("GET integrations", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: base(project.id), caller: owner };
  });

  runCommonRouteTests("GET integration", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    return { method: "GET", path: `${base(project.id)}/${integration.id}`, caller: owner };
  });
});

describe("PATCH /v1/projects/{project_id}/notification-integrations/{integration_id}", () => {
  it("merges the given flags and keeps the others; may change the url", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id, {
      configuration: { deployments_failed: true, changelog: true },
    });
    const res = await request<Integration>("PATCH", `${base(project.id)}/${integration.id}`, {
      key: owner.key,
      body: { configuration: { changelog: false, services_ok: true } },
    });
    expect(res.status).toBe(200);
    expect(res.body.configuration).toEqual({ ...ALL_OFF, deployments_failed: true, services_ok: true });
    expect(res.body.url).toBe(URL_OK);
    expect(res.body).not.toHaveProperty("signing_secret");
    expect(res.body.updated_at >= integration.updated_at).toBe(true);

    const moved = await request<Integration>("PATCH", `${base(project.id)}/${integration.id}`, {
      key: owner.key,
      body: { url: "https://other.example.com/hook" },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.url).toBe("https://other.example.com/hook");
    expect(moved.body.configuration).toEqual(res.body.configuration);
  });

  it.each([
    [{}, "configuration"],
    [{ configuration: {} }, "configuration"],
    [{ configuration: { changelog: 1 } }, "configuration.changelog"],
    [{ configuration: { nope: true } }, "configuration.nope"],
    [{ url: "http://hooks.example.com/x" }, "url"],
    [{ url: "https://192.168.0.1/x", configuration: { changelog: true } }, "url"],
    [{ type: "slack" }, "type"],
  ])("refuses %j with 400 at %s and changes nothing", async (body, path) => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    const res = await request<ErrorBody>("PATCH", `${base(project.id)}/${integration.id}`, {
      key: owner.key,
      body,
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
    const after = await request<Integration>("GET", `${base(project.id)}/${integration.id}`, {
      key: owner.key,
    });
    const { signing_secret: _secret, ...before } = integration;
    expect(after.body).toEqual(before);
  });

  it("a viewer is 403 forbidden; an unknown integration is 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    const integration = await create(owner, project.id);
    const body = { configuration: { changelog: true } };
    const res = await request<ErrorBody>("PATCH", `${base(project.id)}/${integration.id}`, {
      key: viewer.key,
      body,
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("forbidden");
    const missing = await request("PATCH", `${base(project.id)}/7Hq3VnT5m2WcXbQ9pLk4Rz`, {
      key: owner.key,
      body,
    });
    expect(missing.status).toBe(404);
  });

  runCommonRouteTests("PATCH integration", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    return {
      method: "PATCH",
      path: `${base(project.id)}/${integration.id}`,
      body: { configuration: { changelog: true } },
      caller: owner,
    };
  });
});

describe("GET .../deliveries", () => {
  it("is empty for a new integration and documented in /openapi.json", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    const res = await request("GET", `${base(project.id)}/${integration.id}/deliveries`, { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], has_more: false });
    const doc = await request<{ paths: Record<string, Record<string, { operationId: string }>> }>(
      "GET",
      "/openapi.json",
    );
    const paths = doc.body.paths;
    expect(
      paths["/v1/projects/{project_id}/notification-integrations/{integration_id}/deliveries"]?.get
        ?.operationId,
    ).toBe("listIntegrationDeliveries");
    expect(paths["/v1/projects/{project_id}/notification-integrations"]?.post?.operationId).toBe(
      "createIntegration",
    );
    expect(JSON.stringify(doc.body)).not.toContain("/internal/");
  });

  it("refuses a bad cursor and a bad limit", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    const path = `${base(project.id)}/${integration.id}/deliveries`;
    expect((await request("GET", `${path}?after=%%%`, { key: owner.key })).status).toBe(400);
    expect((await request("GET", `${path}?limit=0`, { key: owner.key })).status).toBe(400);
  });

  runCommonRouteTests("GET deliveries", async () => {
    const { owner, project } = await createOwnedProject();
    const integration = await create(owner, project.id);
    return { method: "GET", path: `${base(project.id)}/${integration.id}/deliveries`, caller: owner };
  });
});

describe("internal API", () => {
  it("creates a slack integration, with its secret, for an existing project only", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await internal<Integration>("POST", `/projects/${project.id}/notification-integrations`, {
      type: "slack",
      url: "https://hooks.slack.com/services/T000/B000/XXXX",
      configuration: { deployments_succeeded: true },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: "slack",
      configuration: { ...ALL_OFF, deployments_succeeded: true },
    });
    expect(res.body.signing_secret).toMatch(/^whsec_/);
    const got = await request<Integration>("GET", `${base(project.id)}/${res.body.id}`, { key: owner.key });
    expect(got.body.type).toBe("slack");

    const missing = await internal("POST", "/projects/7Hq3VnT5m2WcXbQ9pLk4Rz/notification-integrations", {
      type: "slack",
      url: "https://hooks.slack.com/x",
    });
    expect(missing.status).toBe(404);
    const insecure = await internal<ErrorBody>("POST", `/projects/${project.id}/notification-integrations`, {
      type: "webhook",
      url: "http://127.0.0.1:9/x",
    });
    expect(insecure.status).toBe(400);
    expect(insecure.body.cause?.[0]?.path).toBe("url");
  });

  it("accepts an internal event with 202 and its ID; refuses deployment types and unknown projects", async () => {
    const { project } = await createOwnedProject();
    const ok = await internal<{ id: string }>("POST", `/projects/${project.id}/events`, {
      type: "changelog.created",
      data: { title: "v2" },
    });
    expect(ok.status).toBe(202);
    expect(ok.body.id).toMatch(/^[1-9A-HJ-NP-Za-km-z]{22}$/);
    const row = await env.DB.prepare("SELECT type, data FROM events WHERE id = ?").bind(ok.body.id).first<{
      type: string;
      data: string;
    }>();
    expect(row?.type).toBe("changelog.created");
    expect(JSON.parse(row?.data ?? "{}")).toEqual({ title: "v2", project_id: project.id });

    const deployment = await internal("POST", `/projects/${project.id}/events`, {
      type: "deployment.succeeded",
      data: {},
    });
    expect(deployment.status).toBe(400);
    const missing = await internal("POST", "/projects/7Hq3VnT5m2WcXbQ9pLk4Rz/events", {
      type: "service.ok",
      data: {},
    });
    expect(missing.status).toBe(404);
    const noAuth = await request("POST", `/internal/v1/projects/${project.id}/events`, {
      body: { type: "service.ok", data: {} },
    });
    expect(noAuth.status).toBe(401);
  });
});
