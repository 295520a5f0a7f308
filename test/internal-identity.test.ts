/** The internal API rows of API_CONTRACT §9 for identity and topology. */
import { describe, expect, it } from "vitest";
import { internal, request } from "./helpers/api";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "./helpers/expect";
import {
  createAccount,
  createEnvironment,
  createOrg,
  createOrgWithOwner,
  createProject,
  unique,
} from "./helpers/factories";

const EMPTY_PROFILE = { bio: null, github: null, location: null, twitter: null, website: null };

describe("POST /internal/v1/orgs", () => {
  it("creates an organization", async () => {
    const res = await internal("POST", "/orgs", { name: "Acme" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      name: "Acme",
      created_at: expect.stringMatching(TS),
    });
  });

  it.each([[{}], [{ name: "" }], [{ name: "x".repeat(101) }], [{ name: 1 }], [{ name: "a", plan: "pro" }]])(
    "refuses %j with 400",
    async (body) => {
      expectError(await internal("POST", "/orgs", body), 400, "bad_input");
    },
  );
});

describe("POST /internal/v1/accounts", () => {
  it("defaults display_name to name, avatar to null and every profile field to null", async () => {
    const res = await internal("POST", "/accounts", { name: "ada" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      name: "ada",
      display_name: "ada",
      avatar: null,
      profile: EMPTY_PROFILE,
      created_at: expect.stringMatching(TS),
    });
  });

  it("keeps what is given and fills the rest of the profile with null", async () => {
    const res = await internal("POST", "/accounts", {
      name: "grace",
      display_name: "Grace Hopper",
      avatar: "https://example.com/g.png",
      profile: { github: "grace", website: null },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "grace",
      display_name: "Grace Hopper",
      avatar: "https://example.com/g.png",
      profile: { ...EMPTY_PROFILE, github: "grace" },
    });
    const nulls = await internal("POST", "/accounts", { name: "n", display_name: null, profile: null });
    expect(nulls.body).toMatchObject({ display_name: "n", profile: EMPTY_PROFILE });
  });

  it.each([
    [{}, "name"],
    [{ name: 5 }, "name"],
    [{ name: "a", profile: { shoe_size: 1 } }, "profile.shoe_size"],
    [{ name: "a", profile: { bio: 5 } }, "profile.bio"],
    [{ name: "a", email: "a@b.c" }, "email"],
  ])("refuses %j naming %s", async (body, path) => {
    expectError(await internal("POST", "/accounts", body), 400, "bad_input", path);
  });
});

describe("POST /internal/v1/orgs/{org_id}/members", () => {
  it("adds an account with an org role", async () => {
    const org = await createOrg();
    const account = await createAccount();
    const res = await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "admin" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      org_id: org.id,
      account_id: account.id,
      role: "admin",
      created_at: expect.stringMatching(TS),
    });
    // One account may belong to several organizations.
    const other = await createOrg();
    expect(
      (await internal("POST", `/orgs/${other.id}/members`, { account_id: account.id, role: "member" }))
        .status,
    ).toBe(201);
  });

  it("unknown org 404, unknown account 400, duplicate 409, bad role or id 400", async () => {
    const org = await createOrg();
    const account = await createAccount();
    expectError(
      await internal("POST", `/orgs/${UNKNOWN_ID}/members`, { account_id: account.id, role: "member" }),
      404,
      "not_found",
    );
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: UNKNOWN_ID, role: "member" }),
      400,
      "bad_input",
      "account_id",
    );
    expect(
      (await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "member" })).status,
    ).toBe(201);
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "owner" }),
      409,
      "conflict",
    );
    expectError(
      await internal("POST", `/orgs/${org.id}/members`, { account_id: account.id, role: "viewer" }),
      400,
      "bad_input",
      "role",
    );
    expectError(
      await internal("POST", "/orgs/nope/members", { account_id: account.id, role: "member" }),
      400,
      "bad_input",
      "org_id",
    );
  });
});

describe("api keys", () => {
  it("create → use → revoke (204) → refused; unknown key 404", async () => {
    const { org, owner } = await createOrgWithOwner();
    const created = await internal<{ id: string; key: string }>("POST", `/orgs/${org.id}/api-keys`, {
      account_id: owner.accountId,
      created_by: owner.accountId,
    });
    expect(created.status).toBe(201);
    expect((await request("GET", "/v1/orgs", { key: created.body.key })).status).toBe(200);
    const revoked = await internal("DELETE", `/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(204);
    expect(revoked.raw).toBe("");
    expect(
      (
        await request("GET", "/v1/orgs", {
          key: created.body.key,
          headers: { "cf-connecting-ip": "192.0.2.77" },
        })
      ).status,
    ).toBe(401);
    expectError(await internal("DELETE", `/api-keys/${UNKNOWN_ID}`), 404, "not_found");
  });
});

describe("POST /internal/v1/projects/{project_id}/environments", () => {
  it("creates an environment; names are free, a project's `production` and repeats included", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const other = await createProject(owner);
    const res = await internal("POST", `/projects/${project.id}/environments`, { name: "staging" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      project_id: project.id,
      name: "staging",
      created_at: expect.stringMatching(TS),
    });
    // No document makes names unique: a second `staging`, and a `production` beside the first.
    for (const name of ["staging", "production"]) {
      const again = await internal<{ id: string; name: string }>(
        "POST",
        `/projects/${project.id}/environments`,
        {
          name,
        },
      );
      expect([again.status, again.body.name]).toEqual([201, name]);
      expect(again.body.id).not.toBe(res.body.id);
    }
    expect((await internal("POST", `/projects/${other.id}/environments`, { name: "staging" })).status).toBe(
      201,
    );
  });

  it("unknown or deleted project 404; bad bodies 400", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    expectError(
      await internal("POST", `/projects/${UNKNOWN_ID}/environments`, { name: "x" }),
      404,
      "not_found",
    );
    expect((await request("DELETE", `/v1/projects/${project.id}`, { key: owner.key })).status).toBe(204);
    expectError(
      await internal("POST", `/projects/${project.id}/environments`, { name: "x" }),
      404,
      "not_found",
    );
    for (const body of [{}, { name: null }, { name: 7 }, { name: "x", region: "eu" }]) {
      expectError(await internal("POST", `/projects/${UNKNOWN_ID}/environments`, body), 400, "bad_input");
    }
  });
});

describe("POST /internal/v1/environments/{environment_id}/components", () => {
  it("creates a component; names are free (repeats included); unknown environment 404", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const staging = await createEnvironment(project.id);
    const res = await internal("POST", `/environments/${project.default_environment_id}/components`, {
      name: "web",
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: project.default_environment_id,
      name: "web",
      created_at: expect.stringMatching(TS),
    });
    const again = await internal("POST", `/environments/${project.default_environment_id}/components`, {
      name: "web",
    });
    expect(again.status).toBe(201);
    expect((await internal("POST", `/environments/${staging.id}/components`, { name: "web" })).status).toBe(
      201,
    );
    expectError(
      await internal("POST", `/environments/${UNKNOWN_ID}/components`, { name: "web" }),
      404,
      "not_found",
    );
    expectError(await internal("POST", "/environments/bad!/components", { name: "web" }), 400, "bad_input");
  });
});

describe("POST /internal/v1/environments/{environment_id}/stacks", () => {
  it("creates a stack; template_id is generated when missing and kept when given", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    const envId = project.default_environment_id;
    const generated = await internal<{ template_id: string }>("POST", `/environments/${envId}/stacks`, {
      name: "net",
    });
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      environment_id: envId,
      name: "net",
      template_id: expect.stringMatching(NEW_ID),
      created_at: expect.stringMatching(TS),
    });
    const template = "0b9f6a3c-1d2e-4f5a-8b7c-9d0e1f2a3b4c";
    const given = await internal("POST", `/environments/${envId}/stacks`, {
      name: "net2",
      template_id: template,
    });
    expect(given.body).toMatchObject({ template_id: template });
    const other = await internal<{ template_id: string }>("POST", `/environments/${envId}/stacks`, {
      name: unique("s"),
    });
    expect(other.body.template_id).not.toBe(generated.body.template_id);
  });

  it("unknown environment 404; bad template_id or name 400", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    expectError(
      await internal("POST", `/environments/${UNKNOWN_ID}/stacks`, { name: "s" }),
      404,
      "not_found",
    );
    for (const [body, path] of [
      // §17: any string of 1–255 characters ("nope" is a fine template name).
      [{ name: "s", template_id: "" }, "template_id"],
      [{ name: "s", template_id: "t".repeat(256) }, "template_id"],
      [{ name: 7 }, "name"],
      [{}, "name"],
      [{ name: "s", kind: "x" }, "kind"],
    ] as const) {
      expectError(
        await internal("POST", `/environments/${project.default_environment_id}/stacks`, body),
        400,
        "bad_input",
        path,
      );
    }
  });
});
