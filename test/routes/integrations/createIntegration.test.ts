/** createIntegration: POST /v1/projects/{project_id}/notification-integrations (API_CONTRACT §13). */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { type ErrorBody, TS } from "../../helpers/expect";
import { addProjectMember, createCaller, createOwnedProject } from "../../helpers/factories";
import {
  ALL_OFF,
  createPublicIntegration,
  type Integration,
  integrationsPath,
  URL_OK,
} from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { useProductionUrlRules } from "../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("POST /v1/projects/{project_id}/notification-integrations", () => {
  it("creates a webhook with every flag present and shows the signing secret once", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<Integration>("POST", integrationsPath(project.id), {
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

    const got = await request<Integration>("GET", `${integrationsPath(project.id)}/${res.body.id}`, {
      key: owner.key,
    });
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty("signing_secret");
    expect(got.raw).not.toContain(res.body.signing_secret);
    const list = await request<{ data: Integration[]; has_more: boolean }>(
      "GET",
      integrationsPath(project.id),
      {
        key: owner.key,
      },
    );
    expect(list.body).toEqual({ data: [got.body], has_more: false });
    expect(list.raw).not.toContain("whsec_");
  });

  it("a missing configuration means every flag off; each secret is different", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await createPublicIntegration(owner, project.id, { configuration: undefined });
    const b = await createPublicIntegration(owner, project.id);
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
    const res = await request<ErrorBody>("POST", integrationsPath(project.id), { key: owner.key, body });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("bad_input");
    expect(res.body.cause?.map((c) => c.path)).toContain(path);
    const list = await request<{ data: unknown[] }>("GET", integrationsPath(project.id), { key: owner.key });
    expect(list.body.data).toEqual([]);
  });

  it("refuses a body that is not JSON", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<ErrorBody>("POST", integrationsPath(project.id), {
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
    const asViewer = await request<ErrorBody>("POST", integrationsPath(project.id), {
      key: viewer.key,
      body,
    });
    expect(asViewer.status).toBe(403);
    expect(asViewer.body.code).toBe("forbidden");
    expect((await request("GET", integrationsPath(project.id), { key: viewer.key })).status).toBe(200);
    const asOutsider = await request<ErrorBody>("POST", integrationsPath(project.id), {
      key: outsider.key,
      body,
    });
    expect(asOutsider.status).toBe(404);
    expect((await request("POST", integrationsPath(project.id), { key: contributor.key, body })).status).toBe(
      201,
    );
  });

  it("an unknown project is 404; a malformed project ID is 400", async () => {
    const { owner } = await createOwnedProject();
    const body = { type: "webhook", url: URL_OK };
    const missing = await request<ErrorBody>("POST", integrationsPath("7Hq3VnT5m2WcXbQ9pLk4Rz"), {
      key: owner.key,
      body,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    expect((await request("POST", integrationsPath("nope"), { key: owner.key, body })).status).toBe(400);
  });

  runCommonRouteTests("POST integration", async () => {
    const { owner, project } = await createOwnedProject();
    return {
      method: "POST",
      path: integrationsPath(project.id),
      body: { type: "webhook", url: URL_OK },
      caller: owner,
    };
  });
});
