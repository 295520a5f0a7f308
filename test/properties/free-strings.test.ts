/**
 * Free strings (API_CONTRACT §9, §17) where they cross operations: what one operation stores,
 * another shows as given. A deployment's free source fields and stack IDs:
 * test/routes/internal/deployments/internalCreateDeployment.test.ts; a stack's free reason:
 * test/routes/internal/deployments/internalUpdateDeployment.test.ts.
 */
import { describe, expect, it } from "vitest";
import { internal, request } from "../helpers/api";
import type { ErrorBody } from "../helpers/expect";
import { createOwnedProject, createProjectWithStack } from "../helpers/factories";
import { type Member, membersPath, orgAccount } from "../helpers/members";

const long = (prefix: string, length: number) => prefix + "x".repeat(length - prefix.length);

describe("free strings", () => {
  it("a project's icon may be a long `url:` (a data URL), on create and replace", async () => {
    const { owner } = await createOwnedProject();
    const icon = long("url:data:image/png;base64,", 50_000);
    const created = await request<{ id: string; icon: string; default_environment_id: string; name: string }>(
      "POST",
      "/v1/projects",
      { key: owner.key, body: { name: "long-icon", icon } },
    );
    expect(created.status).toBe(201);
    expect(created.body.icon).toBe(icon);
    const other = long("url:data:image/svg+xml;base64,", 4_000);
    const replaced = await request<{ icon: string }>("PUT", `/v1/projects/${created.body.id}`, {
      key: owner.key,
      body: {
        name: created.body.name,
        default_environment_id: created.body.default_environment_id,
        icon: other,
      },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.icon).toBe(other);
    // The pattern still applies.
    const bad = await request<ErrorBody>("POST", "/v1/projects", {
      key: owner.key,
      body: { name: "bad-icon", icon: long("picture:", 3_000) },
    });
    expect([bad.status, bad.body.code]).toEqual([400, "bad_input"]);
  });

  it.each([
    ["empty", ""],
    ["5,000 characters", long("Ada ", 5_000)],
  ])(
    "an account's name is a free string (%s), shown as given in its member record and list",
    async (_, name) => {
      const { org, owner, project } = await createOwnedProject();
      const account = await orgAccount(org, { name });
      expect(account.name).toBe(name);
      const added = await request<Member[]>("POST", membersPath(project.id), {
        key: owner.key,
        body: { account_ids: [account.id] },
      });
      expect(added.status).toBe(201);
      // `request` checks every answer against /openapi.json: the published schema must allow it.
      const member = await request<Member>("GET", membersPath(project.id, account.id), { key: owner.key });
      expect([member.status, member.body.name]).toEqual([200, name]);
      const page = await request<{ data: Member[] }>("GET", membersPath(project.id), { key: owner.key });
      expect(page.status).toBe(200);
      expect(page.body.data.find((m) => m.account_id === account.id)?.name).toBe(name);
    },
  );

  it("an account's display name, avatar and profile are free strings, shown as given in its member record", async () => {
    const { org, owner, project } = await createOwnedProject();
    const profile = {
      bio: long("bio ", 5_000),
      github: long("gh", 300),
      location: long("loc", 400),
      twitter: long("tw", 300),
      website: long("https://example.com/", 3_000),
    };
    const fields = {
      display_name: long("Ada ", 500),
      avatar: long("data:image/png;base64,", 20_000),
      profile,
    };
    const account = await orgAccount(org, fields);
    const added = await request("POST", membersPath(project.id), {
      key: owner.key,
      body: { account_ids: [account.id] },
    });
    expect(added.status).toBe(201);
    const member = await request<Member>("GET", membersPath(project.id, account.id), { key: owner.key });
    expect(member.status).toBe(200);
    expect(member.body).toMatchObject(fields);
  });

  it("a resource's type, physical ID and reason are free strings", async () => {
    const { stack } = await createProjectWithStack();
    const body = {
      resource_type: long("Custom::", 600),
      physical_id: long("arn:aws:", 5_000),
      status: "create_failed",
      status_reason: long("Error: ", 100_000),
    };
    const created = await internal<Record<string, unknown> & { id: string }>(
      "POST",
      `/stacks/${stack.id}/resources`,
      body,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject(body);
    const reason = long("Retrying: ", 50_000);
    const updated = await internal("PATCH", `/resources/${created.body.id}`, {
      status: "create_in_progress",
      status_reason: reason,
      physical_id: long("arn:aws:", 3_000),
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ status_reason: reason });
  });
});

describe("names the documents leave free", () => {
  it("a stack, component, account or API key name takes any length; an organization's and an environment's 1–100 (§23)", async () => {
    const { org, owner, project, environmentId } = await createProjectWithStack();
    const name = long("a name with spaces, ünïcode and 🚀 ", 5_000);
    const made = await Promise.all([
      internal<{ name: string }>("POST", `/environments/${environmentId}/stacks`, { name }),
      internal<{ name: string }>("POST", `/environments/${environmentId}/components`, { name }),
      internal<{ name: string }>("POST", "/accounts", { name }),
      internal<{ name: string }>("POST", `/orgs/${org.id}/api-keys`, {
        account_id: owner.accountId,
        created_by: owner.accountId,
        name,
      }),
    ]);
    for (const res of made) {
      expect(res.status, res.raw.slice(0, 200)).toBe(201);
      expect(res.body.name).toBe(name);
    }
    const orgName = await internal<ErrorBody>("POST", "/orgs", { name: "x".repeat(101) });
    expect([orgName.status, orgName.body.cause?.[0]?.path]).toEqual([400, "name"]);
    const environment = await internal<ErrorBody>("POST", `/projects/${project.id}/environments`, { name });
    expect([environment.status, environment.body.cause?.[0]?.path]).toEqual([400, "name"]);
  });

  it("a resource's type and physical ID may be empty (reported before the resource exists)", async () => {
    const { stack } = await createProjectWithStack();
    const res = await internal<{ id: string; resource_type: string; physical_id: string }>(
      "POST",
      `/stacks/${stack.id}/resources`,
      { resource_type: "", physical_id: "", status: "create_in_progress" },
    );
    expect(res.status, res.raw).toBe(201);
    expect([res.body.resource_type, res.body.physical_id]).toEqual(["", ""]);
    const later = await internal<{ physical_id: string }>("PATCH", `/resources/${res.body.id}`, {
      status: "create_complete",
      physical_id: "",
    });
    expect([later.status, later.body.physical_id]).toEqual([200, ""]);
  });
});
