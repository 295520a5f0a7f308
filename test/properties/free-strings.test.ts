import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../src/schemas/deployment";
import { MAX_DEPLOYMENT_DATA_BYTES } from "../../src/services/deployment-transitions";
import { internal, request } from "../helpers/api";
import type { ErrorBody } from "../helpers/expect";
import { createOwnedProject, createProjectWithStack, createStack, insertStacks } from "../helpers/factories";
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

  it("a deployment's source fields are free strings", async () => {
    const { environmentId, stack } = await createProjectWithStack();
    const source = {
      git: {
        commit: {
          author: { email: long("ada@", 2_000), name: long("Ada ", 2_000) },
          committer: { name: long("GitHub ", 1_500) },
          message: long("Ship it\n\n", 100_000),
          sha: long("0f3c2a1", 2_000),
        },
        installation_id: long("42", 1_500),
        owner: long("acme", 1_500),
        provider: "github",
        ref: long("refs/heads/feature/", 3_000),
        repo: long("storefront", 1_500),
        repo_id: long("9001", 1_500),
      },
      registry: {
        image: long("registry.example.com/", 5_000),
        command: Array.from({ length: 1_200 }, () => "run"),
      },
    };
    const created = await internal<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: [stack.id],
      data: { patch: [], source },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.source).toEqual(source);
  });

  it("a stack's reason in a deployment is a free string; the deployment's data is bounded by its row", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const stacks = [stack, await createStack(environmentId), await createStack(environmentId)];
    const created = await internal<DeploymentRecord>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: stacks.map((s) => s.id),
      data: { patch: [] },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const report = (stackId: string, reason: string) =>
      internal<DeploymentRecord & ErrorBody>("PATCH", `/deployments/${id}`, {
        status: "in_progress",
        stacks: [{ id: stackId, status: "in_progress", status_reason: reason }],
      });
    // Two reports of 40 % of the bound each are kept; the third would take the data past it.
    const share = Math.floor(MAX_DEPLOYMENT_DATA_BYTES * 0.4);
    const first = await report(stacks[0]?.id ?? "", long("a", share));
    expect(first.status).toBe(200);
    const second = await report(stacks[1]?.id ?? "", long("b", share));
    expect(second.status).toBe(200);
    expect(second.body.data.stacks?.map((s) => s.status_reason?.length)).toEqual([share, share, undefined]);

    const third = await report(stacks[2]?.id ?? "", long("c", share));
    expect([third.status, third.body.code]).toEqual([400, "bad_input"]);
    expect(third.body.cause?.map((c) => c.path)).toEqual(["stacks"]);
    const after = await request<DeploymentRecord>("GET", `/v1/deployments/${id}`, { key: owner.key });
    expect(after.status).toBe(200);
    expect(after.body.updated_at).toBe(second.body.updated_at);
    expect(after.body.data.stacks?.map((s) => s.status)).toEqual(["in_progress", "in_progress", "queued"]);
  });
});

describe("names the documents leave free", () => {
  it("a stack, environment, component, account or API key name takes any length; an organization's 1–100", async () => {
    const { org, owner, project, environmentId } = await createProjectWithStack();
    const name = long("a name with spaces, ünïcode and 🚀 ", 5_000);
    const made = await Promise.all([
      internal<{ name: string }>("POST", `/environments/${environmentId}/stacks`, { name }),
      internal<{ name: string }>("POST", `/projects/${project.id}/environments`, { name }),
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

describe("a deployment's stack IDs", () => {
  it("any number that fits a deployment's row; past D1's row size the create is 400 and writes nothing", async () => {
    const { owner, project, environmentId } = await createProjectWithStack();
    // 24,000 stacks of the environment, straight to D1 (32-hex IDs): their IDs and queued
    // entries take the deployment past MAX_DEPLOYMENT_DATA_BYTES.
    const ids = await insertStacks(project.id, environmentId, 24_000);
    const patch = [{ op: "add", path: "/a", value: 1 }];
    const tooMany = await internal<ErrorBody>("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: ids,
      data: { patch },
    });
    expect([tooMany.status, tooMany.body.cause?.[0]?.path], tooMany.raw.slice(0, 300)).toEqual([
      400,
      "stack_ids",
    ]);
    const none = await request<{ data: unknown[] }>("GET", `/v1/environments/${environmentId}/deployments`, {
      key: owner.key,
    });
    expect(none.body.data).toEqual([]);
    // A thousand fit.
    const fits = await internal("POST", `/environments/${environmentId}/deployments`, {
      stack_ids: ids.slice(0, 1000),
      data: { patch },
    });
    expect(fits.status, fits.raw.slice(0, 300)).toBe(201);
  });
});
