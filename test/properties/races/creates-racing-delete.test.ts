/**
 * A create under a project that is deleted concurrently is `404 not_found`, never `500`
 * (API_CONTRACT §17). The error boundary maps D1's foreign-key violation, so every create
 * under a project is covered by one rule; this file checks each of them twice: with real
 * concurrency (`Promise.all([create, DELETE project])`, many rounds), and deterministically,
 * with a D1 trigger that deletes the project inside the create's own INSERT — the exact
 * moment a concurrent delete can land between the service's checks and its write (SQLite
 * then undoes the failed statement whole, the trigger's DELETE included).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ApiResponse, internal, internalOk, request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import {
  type Caller,
  createAccount,
  createComponent,
  createOrgWithOwner,
  createProject,
  createStack,
  type Org,
  type Project,
  unique,
} from "../../helpers/factories";
import { countRows } from "../../helpers/rows";

type Parents = { org: Org; owner: Caller; project: Project; environmentId: string };

/** One create under a project: the table it writes, what it needs first, and the request itself. */
type CreateCase = {
  name: string;
  table: string;
  created: number;
  prepare?: (p: Parents) => Promise<Record<string, string>>;
  send: (p: Parents, extra: Record<string, string>) => Promise<ApiResponse<unknown>>;
};

const HOOK = { type: "webhook", url: "https://hooks.example.com/x", configuration: {} };
const stackOf = async (p: Parents) => ({ stackId: (await createStack(p.environmentId)).id });

const CASES: CreateCase[] = [
  {
    name: "public members add",
    table: "project_members",
    created: 201,
    prepare: async (p) => {
      const account = await createAccount();
      await internalOk("POST", `/orgs/${p.org.id}/members`, { account_id: account.id, role: "member" });
      return { accountId: account.id };
    },
    send: (p, x) =>
      request("POST", `/v1/projects/${p.project.id}/members`, {
        key: p.owner.key,
        body: { account_ids: [x.accountId], role: "viewer" },
      }),
  },
  {
    name: "public integration create",
    table: "notification_integrations",
    created: 201,
    send: (p) =>
      request("POST", `/v1/projects/${p.project.id}/notification-integrations`, {
        key: p.owner.key,
        body: HOOK,
      }),
  },
  {
    name: "public environment variable create",
    table: "variables",
    created: 201,
    send: (p) =>
      request("POST", `/v1/environments/${p.environmentId}/variables`, {
        key: p.owner.key,
        body: { name: "API_TOKEN", type: "secret", value: "s3cret" },
      }),
  },
  {
    name: "public component variable create",
    table: "variables",
    created: 201,
    prepare: async (p) => ({ componentId: (await createComponent(p.environmentId)).id }),
    send: (p, x) =>
      request("POST", `/v1/components/${x.componentId}/variables`, {
        key: p.owner.key,
        body: { name: "PORT", type: "string", value: "8080" },
      }),
  },
  {
    name: "internal environment create",
    table: "environments",
    created: 201,
    send: (p) => internal("POST", `/projects/${p.project.id}/environments`, { name: unique("env") }),
  },
  {
    name: "internal component create",
    table: "components",
    created: 201,
    send: (p) => internal("POST", `/environments/${p.environmentId}/components`, { name: unique("c") }),
  },
  {
    name: "internal stack create",
    table: "stacks",
    created: 201,
    send: (p) =>
      internal("POST", `/environments/${p.environmentId}/stacks`, {
        name: unique("s"),
        template_id: "tpl-1",
      }),
  },
  {
    name: "internal resource create",
    table: "stack_resources",
    created: 201,
    prepare: stackOf,
    send: (_p, x) =>
      internal("POST", `/stacks/${x.stackId}/resources`, {
        resource_type: "AWS::SQS::Queue",
        physical_id: "q",
        status: "create_in_progress",
      }),
  },
  {
    name: "internal deployment create",
    table: "deployments",
    created: 201,
    prepare: stackOf,
    send: (p, x) =>
      internal("POST", `/environments/${p.environmentId}/deployments`, {
        stack_ids: [x.stackId],
        data: { patch: [{ op: "add", path: "/a", value: 1 }] },
      }),
  },
  {
    name: "internal event create",
    table: "events",
    created: 202,
    send: (p) =>
      internal("POST", `/projects/${p.project.id}/events`, { type: "changelog.created", data: {} }),
  },
  {
    name: "internal integration create",
    table: "notification_integrations",
    created: 201,
    send: (p) => internal("POST", `/projects/${p.project.id}/notification-integrations`, HOOK),
  },
];

async function parents(org: Org, owner: Caller): Promise<Parents> {
  const project = await createProject(owner);
  return { org, owner, project, environmentId: project.default_environment_id };
}

describe("creates racing a project delete (§17)", () => {
  it.each(CASES)("$name: 201 or 404 over many concurrent rounds, never 500", async (c) => {
    // Each case has its own owner (and so its own rate-limit window).
    const { org, owner } = await createOrgWithOwner();
    // Eight races at once, the delete started 0–3 ms after the create, so that in a good
    // share of them the delete lands between the create's checks and its write.
    const setups = [];
    for (let i = 0; i < 8; i++) {
      const p = await parents(org, owner);
      setups.push({ p, extra: (await c.prepare?.(p)) ?? {} });
    }
    await Promise.all(
      setups.map(async ({ p, extra }, i) => {
        const [created, deleted] = await Promise.all([
          c.send(p, extra),
          new Promise((resolve) => setTimeout(resolve, i % 4)).then(() =>
            request("DELETE", `/v1/projects/${p.project.id}`, { key: owner.key }),
          ),
        ]);
        expect(deleted.status, deleted.raw).toBe(204);
        expect([c.created, 404], created.raw).toContain(created.status);
        if (created.status === 404) expect((created.body as ErrorBody).code).toBe("not_found");
        // Whichever won, nothing of the project is left behind.
        expect(await countRows(c.table, { projectId: p.project.id })).toBe(0);
      }),
    );
  });

  it.each(CASES)("$name: the project vanishing inside the INSERT is 404 not_found", async (c) => {
    const { org, owner } = await createOrgWithOwner();
    const p = await parents(org, owner);
    const extra = (await c.prepare?.(p)) ?? {};
    const before = await countRows(c.table, { projectId: p.project.id });
    const trigger = `vanish_${p.project.id}`;
    // Deletes the project as the create's INSERT runs: the row then fails its foreign key.
    await env.DB.prepare(
      `CREATE TRIGGER "${trigger}" BEFORE INSERT ON ${c.table} WHEN NEW.project_id = '${p.project.id}'
       BEGIN DELETE FROM projects WHERE id = '${p.project.id}'; END`,
    ).run();
    try {
      const res = await c.send(p, extra);
      expect([res.status, (res.body as ErrorBody).code], res.raw).toEqual([404, "not_found"]);
    } finally {
      await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
    }
    // The failed statement is undone whole (the trigger's DELETE with it): nothing was written.
    expect(await countRows(c.table, { projectId: p.project.id })).toBe(before);
  });
});
