/** listIntegrations: GET /v1/projects/{project_id}/notification-integrations, with the shared pagination. */
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject } from "../../helpers/factories";
import { createPublicIntegration, type Integration, integrationsPath } from "../../helpers/integrations";
import { runCommonRouteTests } from "../../helpers/security";
import { useProductionUrlRules } from "../../helpers/webhooks";

// This file checks the production URL rules.
useProductionUrlRules();

describe("GET /v1/projects/{project_id}/notification-integrations", () => {
  it("lists the project's integrations with the shared pagination (newest first by default)", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await createPublicIntegration(owner, project.id);
    const b = await createPublicIntegration(owner, project.id);
    const c = await createPublicIntegration(owner, project.id);
    const list = await request<{ data: Integration[]; has_more: boolean }>(
      "GET",
      integrationsPath(project.id),
      {
        key: owner.key,
      },
    );
    expect(list.body).toEqual({
      data: [c, b, a].map((i) => expect.objectContaining({ id: i.id })),
      has_more: false,
    });
    expect(list.body.data.every((i) => !("signing_secret" in i))).toBe(true);
    const oldest = await request<{ data: Integration[] }>(
      "GET",
      `${integrationsPath(project.id)}?sort_by=created_at`,
      {
        key: owner.key,
      },
    );
    expect(oldest.body.data.map((i) => i.id)).toEqual([a.id, b.id, c.id]);
    const first = await request<{ data: Integration[]; has_more: boolean; next_page: string }>(
      "GET",
      `${integrationsPath(project.id)}?limit=2`,
      { key: owner.key },
    );
    expect([first.body.data.map((i) => i.id), first.body.has_more]).toEqual([[c.id, b.id], true]);
    const rest = await request<{ data: Integration[]; has_more: boolean }>(
      "GET",
      `${integrationsPath(project.id)}?limit=2&after=${encodeURIComponent(first.body.next_page)}`,
      { key: owner.key },
    );
    expect([rest.body.data.map((i) => i.id), rest.body.has_more]).toEqual([[a.id], false]);
    for (const bad of ["limit=0", "limit=abc", "sort_by=name", "after=%21%21"]) {
      const res = await request<{ code: string }>("GET", `${integrationsPath(project.id)}?${bad}`, {
        key: owner.key,
      });
      expect([bad, res.status, res.body.code]).toEqual([bad, 400, "bad_input"]);
    }
  });

  it("an unknown project is 404; a bad limit or cursor is 400", async () => {
    const { owner, project } = await createOwnedProject();
    const unknown = await request<ErrorBody>("GET", integrationsPath("7Hq3VnT5m2WcXbQ9pLk4Rz"), {
      key: owner.key,
    });
    expect([unknown.status, unknown.body.code]).toEqual([404, "not_found"]);
    for (const query of ["limit=0", "limit=241", "after=%%%"]) {
      const bad = await request<ErrorBody>("GET", `${integrationsPath(project.id)}?${query}`, {
        key: owner.key,
      });
      expect([bad.status, bad.body.code], query).toEqual([400, "bad_input"]);
    }
  });

  runCommonRouteTests("GET integrations", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: integrationsPath(project.id), caller: owner };
  });
});
