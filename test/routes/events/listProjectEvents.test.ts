/**
 * listProjectEvents: GET /v1/projects/{project_id}/events, a project's event log (API_CONTRACT
 * §13) with the shared pagination and a type filter.
 */
import { describe, expect, it } from "vitest";
import { newId } from "../../../src/lib/ids";
import type { EventRecord } from "../../../src/schemas/event";
import { request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import {
  addProjectMember,
  createCaller,
  createOrgWithOwner,
  createOwnedProject,
  createProject,
} from "../../helpers/factories";
import { runCommonRouteTests } from "../../helpers/security";
import { writeEvent } from "../../helpers/webhooks";

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };

const list = (projectId: string, query = "") => `/v1/projects/${projectId}/events${query}`;

describe("GET /v1/projects/{project_id}/events", () => {
  it("lists the project's events newest first, the record carrying the webhook body's data", async () => {
    const { owner, project } = await createOwnedProject();
    const a = await writeEvent(project.id, "changelog.created", { title: "v1" }, 3000);
    const b = await writeEvent(project.id, "service.ok", { service: "api" }, 2000);
    const c = await writeEvent(project.id, "deployment.failed", { deployment: { id: "d" } }, 1000);
    const other = await createOwnedProject();
    await writeEvent(other.project.id, "service.ok");

    const res = await request<Page<EventRecord>>("GET", list(project.id), { key: owner.key });
    expect(res.status).toBe(200);
    expect(res.body.data.map((e) => e.id)).toEqual([c.id, b.id, a.id]);
    expect(res.body.data[2]).toEqual({
      id: a.id,
      type: "changelog.created",
      project_id: project.id,
      data: { title: "v1", project_id: project.id },
      created_at: a.createdAt,
    });
    expect(res.body.has_more).toBe(false);
    expect("next_page" in res.body).toBe(false);

    const asc = await request<Page<EventRecord>>("GET", list(project.id, "?sort_by=created_at"), {
      key: owner.key,
    });
    expect(asc.body.data.map((e) => e.id)).toEqual([a.id, b.id, c.id]);
  });

  it("filters by type, repeated or comma-separated, and binds a cursor to the set of types", async () => {
    const { owner, project } = await createOwnedProject();
    const kept = [];
    for (let i = 0; i < 5; i++) {
      kept.push(
        await writeEvent(project.id, i % 2 ? "service.ok" : "service.in_alarm", {}, 10_000 - i * 100),
      );
      await writeEvent(project.id, "changelog.created", {}, 10_000 - i * 100 - 50);
    }
    const expected = kept.map((e) => e.id).reverse();
    const first = await request<Page<EventRecord>>(
      "GET",
      list(project.id, "?type=service.ok,service.in_alarm&limit=3"),
      { key: owner.key },
    );
    expect(first.body.data.map((e) => e.id)).toEqual(expected.slice(0, 3));
    expect(first.body.has_more).toBe(true);
    const cursor = encodeURIComponent(first.body.next_page ?? "");
    // The same set, spelled another way: the cursor still fits.
    const second = await request<Page<EventRecord>>(
      "GET",
      list(project.id, `?type=service.in_alarm&type=service.ok&type=service.ok&limit=3&after=${cursor}`),
      { key: owner.key },
    );
    expect(second.status).toBe(200);
    expect(second.body.data.map((e) => e.id)).toEqual(expected.slice(3));
    expect(second.body.has_more).toBe(false);
    // Another set, no filter, or another order: 400.
    for (const query of [
      `?type=service.ok&after=${cursor}`,
      `?after=${cursor}`,
      `?type=service.ok,service.in_alarm&sort_by=created_at&after=${cursor}`,
    ]) {
      const res = await request<ErrorBody>("GET", list(project.id, query), { key: owner.key });
      expect(res.status, query).toBe(400);
      expect(res.body.cause?.[0]?.path).toBe("after");
    }
  });

  it("refuses an unknown type and an unknown project", async () => {
    const { owner, project } = await createOwnedProject();
    const bad = await request<ErrorBody>("GET", list(project.id, "?type=service.ok,deployment.exploded"), {
      key: owner.key,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("bad_input");
    const missing = await request<ErrorBody>("GET", list(newId()), { key: owner.key });
    expect(missing.status).toBe(404);
  });

  it("a viewer reads; an org member outside the project gets 404", async () => {
    const { org, owner, project } = await createOwnedProject();
    await writeEvent(project.id, "service.ok");
    const viewer = await createCaller(org, "member", owner);
    await addProjectMember(owner, project.id, viewer, "viewer");
    expect((await request("GET", list(project.id), { key: viewer.key })).status).toBe(200);
    const outsider = await createCaller(org, "member", owner);
    expect((await request("GET", list(project.id), { key: outsider.key })).status).toBe(404);
  });

  runCommonRouteTests("GET project events", async () => {
    const { owner, project } = await createOwnedProject();
    return { method: "GET", path: list(project.id), caller: owner };
  });
});

describe("the type filter", () => {
  it("takes any number of values (a value given twice counts once) and refuses an unknown one", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const many = Array(500).fill("service.ok,changelog.created").join(",");
    const path = `/v1/projects/${project.id}/events?type=${many}`;
    const ok = await request<{ data: unknown[] }>("GET", path, { key: owner.key });
    expect([ok.status, ok.body.data], ok.raw).toEqual([200, []]);
    const bad = await request("GET", `${path},nope`, { key: owner.key });
    expect(bad.body).toMatchObject({ code: "bad_input", cause: [{ path: "type.1000" }] });
  });
});
