/**
 * deleteEnvironment: DELETE /v1/environments/{environment_id} (API_CONTRACT §23: project `owner`,
 * `environments:write`; `204`; `409` for the project's default environment and while a deployment
 * of it is `waiting`, `queued` or `in_progress`; otherwise the environment and everything inside it
 * go in one atomic step; audit `deleteEnvironment`), with §11's Idempotency-Key and §12's If-Match.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ApiResponse, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import { logLines, postLogs, reportOk } from "../../helpers/engine";
import {
  deleteEnvironment,
  environmentNames,
  environmentPath,
  expectMissingScope,
  expectPublished,
  getEnvironment,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  publicEnvironment,
  rowsIn,
} from "../../helpers/environments";
import { expectError, UNKNOWN_ID } from "../../helpers/expect";
import {
  type Caller,
  createCaller,
  createComponent,
  createDeployment,
  createEnvironment,
  createOwnedProject,
  createResource,
  createStack,
  projectRoleCallers,
} from "../../helpers/factories";
import { captureLogs, expectRefusedByTrigger } from "../../helpers/logs";
import { projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";
import { componentPath, createVariable, environmentPath as variablesOf } from "../../helpers/variables";

/** A project with a `staging` environment (public create) that holds a stack. */
async function withStaging() {
  const w = await createOwnedProject();
  const staging = await publicEnvironment(w.owner, w.project.id, { name: "staging" });
  const stack = await createStack(staging.id);
  return { ...w, staging, stack };
}

/**
 * An environment holding one of everything: two components with variables, two stacks with
 * resources, deployments in the three final statuses with timelines (status entries and log
 * lines), its own variables changed twice (versions 1 and 2). Returns what to look for after.
 */
async function furnish(owner: Caller, environmentId: string) {
  const components = [await createComponent(environmentId), await createComponent(environmentId)];
  const stacks = [await createStack(environmentId), await createStack(environmentId)];
  const resources = [await createResource(stacks[0]?.id ?? ""), await createResource(stacks[1]?.id ?? "")];
  const own = await createVariable(owner, variablesOf(environmentId), {
    name: "OWN",
    type: "secret",
    value: "1",
  });
  await createVariable(owner, variablesOf(environmentId), { name: "OTHER", type: "string", value: "2" });
  const componentVariable = await createVariable(owner, componentPath(components[0]?.id ?? ""), {
    name: "PORT",
    type: "string",
    value: "8080",
  });
  const stackIds = stacks.map((s) => s.id);
  const deployments: string[] = [];
  for (const final of ["succeeded", "failed", "cancelled"]) {
    const d = await createDeployment(environmentId, stackIds);
    await reportOk(d.id, { status: "in_progress" });
    const logged = await postLogs(d.id, logLines(3));
    expect(logged.status, logged.raw).toBe(202);
    await reportOk(d.id, { status: final });
    deployments.push(d.id);
  }
  return { components, stacks, resources, variables: [own, componentVariable], deployments };
}

const ENVIRONMENT_TABLES = [
  "components",
  "stacks",
  "stack_resources",
  "deployments",
  "variables",
  "variable_versions",
  "variable_version_values",
];

/** What is left of an environment, table by table, and of its deployments' timelines and stack links. */
async function leftOf(environmentId: string, deploymentIds: string[]) {
  const out: Record<string, number> = {};
  for (const table of ENVIRONMENT_TABLES) out[table] = await rowsIn(table, environmentId);
  const marks = deploymentIds.map(() => "?").join(", ");
  for (const table of ["deployment_timeline", "deployment_stacks"]) {
    const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE deployment_id IN (${marks})`)
      .bind(...deploymentIds)
      .first<{ n: number }>();
    out[table] = row?.n ?? 0;
  }
  const self = await env.DB.prepare("SELECT count(*) AS n FROM environments WHERE id = ?")
    .bind(environmentId)
    .first<{ n: number }>();
  out.environments = self?.n ?? 0;
  return out;
}

describe("DELETE /v1/environments/{environment_id}", () => {
  it("204 without a body; the environment is then 404 and gone from the list", async () => {
    const { owner, project, staging } = await withStaging();
    const res = await deleteEnvironment(owner, staging.id);
    expect(res.status, res.raw).toBe(204);
    expect(res.raw).toBe("");
    expectError(await getEnvironment(owner, staging.id), 404, "not_found");
    expect(await environmentNames(owner, project.id)).toEqual(["production"]);
    expectError(await deleteEnvironment(owner, staging.id), 404, "not_found");
    expectError(
      await request("PATCH", environmentPath(staging.id), { key: owner.key, body: { name: "back" } }),
      404,
      "not_found",
    );
  });

  it("deletes everything inside it, and nothing of another environment", async () => {
    const { owner, project } = await createOwnedProject();
    const doomed = await createEnvironment(project.id, "doomed");
    const kept = await createEnvironment(project.id, "kept");
    const inside = await furnish(owner, doomed.id);
    const beside = await furnish(owner, kept.id);
    const before = await leftOf(doomed.id, inside.deployments);
    for (const [table, n] of Object.entries(before)) expect(n, `${table} before`).toBeGreaterThan(0);
    const keptBefore = await leftOf(kept.id, beside.deployments);

    expect((await deleteEnvironment(owner, doomed.id)).status).toBe(204);

    const after = await leftOf(doomed.id, inside.deployments);
    expect(after).toEqual(Object.fromEntries(Object.keys(before).map((table) => [table, 0])));
    expect(await leftOf(kept.id, beside.deployments)).toEqual(keptBefore);

    // Through the API too: each of them is 404.
    const gone = [
      ...inside.components.map((c) => `/v1/components/${c.id}`),
      ...inside.stacks.map((s) => `/v1/stacks/${s.id}`),
      ...inside.resources.map((r) => `/v1/resources/${r.id}`),
      ...inside.deployments.map((d) => `/v1/deployments/${d}`),
      ...inside.deployments.map((d) => `/v1/deployments/${d}/timeline`),
      ...inside.variables.map((v) => `/v1/variables/${v.id}`),
      `${variablesOf(doomed.id)}/versions`,
      `${componentPath(inside.components[0]?.id ?? "")}/versions`,
    ];
    for (const path of gone) expectError(await request("GET", path, { key: owner.key }), 404, "not_found");
  });

  describe("a failed delete", () => {
    // The refused batch is a fault of the service's own (a 500, logged as "unhandled error"): the
    // test checks the line it caused, which is kept out of the run's output.
    const errors = captureLogs("error");

    it("one atomic step: when its audit entry cannot be written, nothing is deleted", async () => {
      const { owner, project } = await createOwnedProject();
      const doomed = await createEnvironment(project.id, "doomed");
      const inside = await furnish(owner, doomed.id);
      const before = await leftOf(doomed.id, inside.deployments);
      const trigger = `keep_env_${doomed.id}`;
      await env.DB.prepare(
        `CREATE TRIGGER "${trigger}" BEFORE INSERT ON audit_log
         WHEN NEW.action = 'deleteEnvironment' AND NEW.target_id = '${doomed.id}'
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
      ).run();
      let res: ApiResponse;
      try {
        // A failed write is a 500 here, which /openapi.json need not describe per route.
        res = await request("DELETE", environmentPath(doomed.id), { key: owner.key, unchecked: true });
      } finally {
        await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
      }
      expect(res.status).toBeGreaterThanOrEqual(500);
      expectRefusedByTrigger(errors.lines(), res);
      expect(await leftOf(doomed.id, inside.deployments)).toEqual(before);
      expect((await deleteEnvironment(owner, doomed.id)).status).toBe(204);
      expect(await leftOf(doomed.id, inside.deployments)).toEqual(
        Object.fromEntries(Object.keys(before).map((table) => [table, 0])),
      );
    });
  });

  it("the project's default environment is 409 and stays; once another is the default, it can go", async () => {
    const { owner, project } = await createOwnedProject();
    const before = await getEnvironment(owner, project.default_environment_id);
    expectError(await deleteEnvironment(owner, project.default_environment_id), 409, "conflict");
    expect((await getEnvironment(owner, project.default_environment_id)).body).toEqual(before.body);

    const next = await publicEnvironment(owner, project.id, { name: "next" });
    const replaced = await request("PUT", `/v1/projects/${project.id}`, {
      key: owner.key,
      body: { name: project.name, default_environment_id: next.id },
    });
    expect(replaced.status, replaced.raw).toBe(200);
    expectError(await deleteEnvironment(owner, next.id), 409, "conflict");
    expect((await deleteEnvironment(owner, project.default_environment_id)).status).toBe(204);
  });

  it.each(["queued", "in_progress"])(
    "409 while a deployment of it is %s; 204 once it is final",
    async (status) => {
      const { owner, staging, stack } = await withStaging();
      const d = await createDeployment(staging.id, [stack.id]);
      if (status === "in_progress") await reportOk(d.id, { status: "in_progress" });
      const refused = await deleteEnvironment(owner, staging.id);
      expectError(refused, 409, "conflict");
      expect((await getEnvironment(owner, staging.id)).status).toBe(200);
      expect(await rowsIn("deployments", staging.id)).toBe(1);
      const cancel = await request("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key });
      expect(cancel.status, cancel.raw).toBe(200);
      expect((await deleteEnvironment(owner, staging.id)).status).toBe(204);
    },
  );

  it("409 while a deployment of it is waiting (§26's status, written straight to D1: no route makes one yet)", async () => {
    const { owner, staging, stack } = await withStaging();
    const d = await createDeployment(staging.id, [stack.id]);
    await env.DB.prepare("UPDATE deployments SET status = 'waiting' WHERE id = ?").bind(d.id).run();
    try {
      expectError(await deleteEnvironment(owner, staging.id), 409, "conflict");
      expect(await rowsIn("deployments", staging.id)).toBe(1);
    } finally {
      // Back to a status every reader knows (the suite shares one database).
      await env.DB.prepare(
        "UPDATE deployments SET status = 'cancelled', finished_at = updated_at WHERE id = ?",
      )
        .bind(d.id)
        .run();
    }
    expect((await deleteEnvironment(owner, staging.id)).status).toBe(204);
  });

  it("a queued deployment of another environment of the project does not hold it", async () => {
    const { owner, project, staging } = await withStaging();
    const stack = await createStack(project.default_environment_id);
    await createDeployment(project.default_environment_id, [stack.id]);
    expect((await deleteEnvironment(owner, staging.id)).status).toBe(204);
  });

  it("one active deployment among final ones is enough to refuse; a deployment started from the API counts", async () => {
    const { owner, staging, stack } = await withStaging();
    for (const final of ["succeeded", "failed"]) {
      const d = await createDeployment(staging.id, [stack.id]);
      await reportOk(d.id, { status: "in_progress" });
      await reportOk(d.id, { status: final });
    }
    const started = await request<{ id: string }>("POST", `${environmentPath(staging.id)}/deployments`, {
      key: owner.key,
      body: { data: { patch: [{ op: "add", path: "/a", value: 1 }] } },
    });
    expect(started.status, started.raw).toBe(201);
    expectError(await deleteEnvironment(owner, staging.id), 409, "conflict");
    await reportOk(started.body.id, { status: "in_progress" });
    expectError(await deleteEnvironment(owner, staging.id), 409, "conflict");
    await reportOk(started.body.id, { status: "succeeded" });
    expect((await deleteEnvironment(owner, staging.id)).status).toBe(204);
  });

  describe("If-Match", () => {
    it("a stale ETag is 409 with cause header.if-match and deletes nothing; the current one deletes", async () => {
      const { owner, staging } = await withStaging();
      const stale = (await getEnvironment(owner, staging.id)).headers.get("etag") ?? "";
      const renamed = await request("PATCH", environmentPath(staging.id), {
        key: owner.key,
        body: { name: "moved" },
      });
      const current = renamed.headers.get("etag") ?? "";
      expectError(
        await deleteEnvironment(owner, staging.id, { "if-match": stale }),
        409,
        "conflict",
        "header.if-match",
      );
      expect((await getEnvironment(owner, staging.id)).status).toBe(200);
      expect((await deleteEnvironment(owner, staging.id, { "if-match": current })).status).toBe(204);
    });

    it("`*` deletes; on an environment that does not exist it is 404", async () => {
      const { owner, staging } = await withStaging();
      expect((await deleteEnvironment(owner, staging.id, { "if-match": "*" })).status).toBe(204);
      expectError(await deleteEnvironment(owner, staging.id, { "if-match": "*" }), 404, "not_found");
    });
  });

  it("writes one audit entry, deleteEnvironment, about the environment; its earlier entries stay", async () => {
    const { owner, project, staging } = await withStaging();
    const requestId = `delete-env-${crypto.randomUUID()}`;
    expect((await deleteEnvironment(owner, staging.id, { "x-request-id": requestId })).status).toBe(204);
    const rows = await rowsOf(requestId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      action: "deleteEnvironment",
      target_type: "environment",
      target_id: staging.id,
      project_id: project.id,
      actor_account_id: owner.accountId,
      actor_api_key_id: owner.keyId,
    });
    const created = await env.DB.prepare(
      "SELECT count(*) AS n FROM audit_log WHERE action = 'createEnvironment' AND target_id = ?",
    )
      .bind(staging.id)
      .first<{ n: number }>();
    expect(created?.n).toBe(1);
    // A refused delete writes nothing.
    const refusedId = `delete-env-${crypto.randomUUID()}`;
    await deleteEnvironment(owner, project.default_environment_id, { "x-request-id": refusedId });
    expect(await rowsOf(refusedId)).toEqual([]);
  });

  it("an Idempotency-Key replays the delete's 204", async () => {
    const { owner, staging } = await withStaging();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const first = await deleteEnvironment(owner, staging.id, headers);
    const retry = await deleteEnvironment(owner, staging.id, headers);
    expect(first.status).toBe(204);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([204, "true"]);
  });

  it("needs project owner: contributors and viewers 403 forbidden; non-members 404; project owners and org admins delete", async () => {
    const w = await withStaging();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const admin = await createCaller(w.org, "admin");
    expectError(await deleteEnvironment(contributor, w.staging.id), 403, "forbidden");
    expectError(await deleteEnvironment(viewer, w.staging.id), 403, "forbidden");
    expectError(await deleteEnvironment(outsider, w.staging.id), 404, "not_found");
    expect((await getEnvironment(w.owner, w.staging.id)).status).toBe(200);
    expect((await deleteEnvironment(projectOwner, w.staging.id)).status).toBe(204);
    const another = await publicEnvironment(w.owner, w.project.id);
    expect((await deleteEnvironment(admin, another.id)).status).toBe(204);
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it; a key restricted elsewhere 404", async () => {
    await expectPublished(
      "delete",
      "/v1/environments/{environment_id}",
      "deleteEnvironment",
      "environments:write",
    );
    const { owner, staging } = await withStaging();
    expectMissingScope(
      await deleteEnvironment(await keyWithout(owner, "environments:write"), staging.id),
      "environments:write",
    );
    expectMissingScope(
      await deleteEnvironment(await keyWith(owner, "environments:read"), staging.id),
      "environments:write",
    );
    expectError(await deleteEnvironment(await keyForAnotherProject(owner), staging.id), 404, "not_found");
    expect((await getEnvironment(owner, staging.id)).status).toBe(200);
    expect((await deleteEnvironment(await keyWith(owner, "environments:write"), staging.id)).status).toBe(
      204,
    );
  });

  it("an unknown environment is 404; a malformed ID is 400 naming it", async () => {
    const { owner } = await createOwnedProject();
    expectError(await deleteEnvironment(owner, UNKNOWN_ID), 404, "not_found");
    expectError(await deleteEnvironment(owner, "nope!"), 400, "bad_input", "environment_id");
  });

  runCommonRouteTests("DELETE /v1/environments/{environment_id}", async () => {
    const { owner, staging } = await withStaging();
    return { method: "DELETE", path: environmentPath(staging.id), caller: owner };
  });
});
