/**
 * What the document's request schemas promise is what the API enforces (API_CONTRACT §17):
 * free text with an unpaired UTF-16 surrogate is refused at its field (the `pattern` the
 * document publishes), well-formed text outside the BMP is fine, and the deployment status
 * filter takes any number of values (SPEC.md: "array of string", no bound).
 */
import { describe, expect, it } from "vitest";
import { request } from "../helpers/api";
import { createEnvironment, createOrgWithOwner, createProject, unique } from "../helpers/factories";

const LONE = "\uD800";

describe("free text", () => {
  it("refuses an unpaired surrogate in a project name or description, at its path; accepts a pair", async () => {
    const { owner } = await createOrgWithOwner();
    for (const [field, body] of [
      ["name", { name: `bad${LONE}` }],
      ["name", { name: `bad\uDC00x` }],
      ["description", { name: unique("p"), description: `x${LONE}` }],
    ] as const) {
      const res = await request("POST", "/v1/projects", { key: owner.key, body });
      expect(res.status, res.raw).toBe(400);
      expect(res.body).toMatchObject({ code: "bad_input", cause: [{ path: field }] });
    }
    const list = await request<{ data: unknown[] }>("GET", "/v1/projects", { key: owner.key });
    expect(list.body.data).toEqual([]);
    const ok = await request("POST", "/v1/projects", { key: owner.key, body: { name: unique("🚀") } });
    expect(ok.status, ok.raw).toBe(201);
  });

  it("refuses an unpaired surrogate in a variable value and an organization name", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const env = await createEnvironment(project.id);
    const res = await request("POST", `/v1/environments/${env.id}/variables`, {
      key: owner.key,
      body: { name: "V", type: "secret", value: `abc${LONE}` },
    });
    expect(res.status, res.raw).toBe(400);
    expect(res.body).toMatchObject({ code: "bad_input", cause: [{ path: "value" }] });
    const org = await request("POST", "/v1/orgs", { key: owner.key, body: { name: `o${LONE}` } });
    expect(org.status, org.raw).toBe(400);
    expect(org.body).toMatchObject({ code: "bad_input", cause: [{ path: "name" }] });
  });
});

describe("list filters: the deployment status filter", () => {
  it("takes any number of values (a value given twice counts once) and refuses an unknown one", async () => {
    const { owner } = await createOrgWithOwner();
    const many = Array(500).fill("failed,cancelled").join(",");
    const ok = await request<{ data: unknown[] }>("GET", `/v1/deployments?status=${many}`, {
      key: owner.key,
    });
    expect([ok.status, ok.body.data], ok.raw).toEqual([200, []]);
    const bad = await request("GET", `/v1/deployments?status=${many},nope`, { key: owner.key });
    expect(bad.status, bad.raw).toBe(400);
    expect(bad.body).toMatchObject({ code: "bad_input", cause: [{ path: "status.1000" }] });
  });

  it("so does the event log's type filter", async () => {
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
