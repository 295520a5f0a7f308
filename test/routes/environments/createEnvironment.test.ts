/**
 * createEnvironment: POST /v1/projects/{project_id}/environments (API_CONTRACT §23: project
 * `owner`, `environments:write`; `201` environment with `Location`; body `{ name,
 * copy_variables_from? }`; names 1–100 characters, unique in the project regardless of case;
 * audit `createEnvironment`), with §11's Idempotency-Key and §12's ETag.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ApiResponse, internal, request } from "../../helpers/api";
import { rowsOf } from "../../helpers/audit-log";
import {
  ENVIRONMENT_FIELDS,
  environmentNames,
  environmentPath,
  expectMissingScope,
  expectPublished,
  getEnvironment,
  keyForAnotherProject,
  keyWith,
  keyWithout,
  postEnvironment,
  projectEnvironmentsPath,
  publicEnvironment,
  STRONG_ETAG,
} from "../../helpers/environments";
import { expectError, NEW_ID, TS, UNKNOWN_ID } from "../../helpers/expect";
import {
  type Caller,
  createCaller,
  createComponent,
  createEnvironment,
  createOwnedProject,
  createProject,
  projectRoleCallers,
  unique,
} from "../../helpers/factories";
import { captureLogs, expectRefusedByTrigger } from "../../helpers/logs";
import { projectCaller } from "../../helpers/projects";
import { runCommonRouteTests } from "../../helpers/security";
import type { VersionList, VersionRecord } from "../../helpers/variable-sets";
import {
  componentPath,
  createVariable,
  type ListBody,
  reveal,
  environmentPath as variablesOf,
} from "../../helpers/variables";

/** The environment's own variables as `{NAME: [type, value]}`, values read one by one through the reveal. */
async function variablesWithValues(caller: Caller, environmentId: string) {
  const list = await request<ListBody>("GET", `${variablesOf(environmentId)}?limit=240`, { key: caller.key });
  expect(list.status, list.raw).toBe(200);
  const out: Record<string, [string, string]> = {};
  for (const v of list.body.data) {
    const value = await reveal(caller, v.id);
    expect(value.status, value.raw).toBe(200);
    out[v.name] = [v.type, value.body.value];
  }
  return { list: list.body.data, values: out };
}

const versionsOf = (caller: Caller, environmentId: string) =>
  request<VersionList>("GET", `${variablesOf(environmentId)}/versions?sort_by=created_at&limit=240`, {
    key: caller.key,
  });

/** Rows of `table` in a project, straight from D1. */
async function projectRows(table: string, projectId: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE project_id = ?`)
    .bind(projectId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** A project whose `source` environment holds three own variables (one of each type) and a component's. */
async function projectWithVariables() {
  const w = await createOwnedProject();
  const source = await createEnvironment(w.project.id, "source");
  const path = variablesOf(source.id);
  await createVariable(w.owner, path, { name: "API_TOKEN", type: "secret", value: "tok-123" });
  const secure = await createVariable(w.owner, path, {
    name: "DB_URL",
    type: "secure_string",
    value: "postgres://x",
  });
  await createVariable(w.owner, path, { name: "REGION", type: "string", value: "eu-west-1" });
  // A second version of the source, so the copy's version 1 is its own history, not the source's.
  await request("PUT", `/v1/variables/${secure.id}`, {
    key: w.owner.key,
    body: { name: "DB_URL", type: "secure_string", value: "postgres://db.internal/app" },
  });
  const component = await createComponent(source.id);
  await createVariable(w.owner, componentPath(component.id), {
    name: "COMPONENT_ONLY",
    type: "string",
    value: "c",
  });
  return { ...w, source };
}

describe("POST /v1/projects/{project_id}/environments", () => {
  it("201: exactly the record's fields, Location, and the record's strong ETag; a read answers the same", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await postEnvironment(owner, project.id, { name: "Staging" });
    expect(res.status, res.raw).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(ENVIRONMENT_FIELDS);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      project_id: project.id,
      name: "Staging",
      created_at: expect.stringMatching(TS),
      updated_at: expect.stringMatching(TS),
      current_deployment_id: null,
      config_pending: false,
    });
    expect(res.headers.get("location")).toBe(`/v1/environments/${res.body.id}`);
    const etag = res.headers.get("etag");
    expect(etag).toMatch(STRONG_ETAG);
    const read = await getEnvironment(owner, res.body.id);
    expect(read.body).toEqual(res.body);
    expect(read.headers.get("etag")).toBe(etag);
    expect((await environmentNames(owner, project.id)).sort()).toEqual(["Staging", "production"]);
  });

  describe("name", () => {
    it("takes 1 to 100 characters", async () => {
      const { owner, project } = await createOwnedProject();
      for (const name of ["a", "x".repeat(100), "🚀 rocket", "with spaces and / slashes"]) {
        const res = await postEnvironment(owner, project.id, { name });
        expect(res.status, `${name}: ${res.raw}`).toBe(201);
        expect(res.body.name).toBe(name);
      }
    });

    it.each([
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(101) }, "name"],
      [{ name: 5 }, "name"],
      [{ name: null }, "name"],
      [{ name: "bad\uD800" }, "name"],
      [{ name: "ok", extra: true }, "extra"],
      [{ name: "ok", current_deployment_id: null }, "current_deployment_id"],
    ])("refuses %j with 400 naming %s; nothing is created", async (body, path) => {
      const { owner, project } = await createOwnedProject();
      expectError(await postEnvironment(owner, project.id, body), 400, "bad_input", path);
      expect(await environmentNames(owner, project.id)).toEqual(["production"]);
    });

    it("is unique in the project regardless of case: 409 with cause `name`, nothing created", async () => {
      const { owner, project } = await createOwnedProject();
      await publicEnvironment(owner, project.id, { name: "Staging" });
      await publicEnvironment(owner, project.id, { name: "Ärger" });
      for (const name of [
        "Staging",
        "staging",
        "STAGING",
        "sTaGiNg",
        "PRODUCTION",
        "Production",
        "äRGER",
        "ÄRGER",
      ]) {
        expectError(await postEnvironment(owner, project.id, { name }), 409, "conflict", "name");
      }
      expect((await environmentNames(owner, project.id)).sort()).toEqual(
        ["Staging", "production", "Ärger"].sort(),
      );
    });

    it("an environment made by the engine (internal create) holds its name too, and the engine is held by it", async () => {
      const { owner, project } = await createOwnedProject();
      await createEnvironment(project.id, "Preview");
      expectError(await postEnvironment(owner, project.id, { name: "preview" }), 409, "conflict", "name");
      await publicEnvironment(owner, project.id, { name: "QA" });
      const internalClash = await internal(`POST`, `/projects/${project.id}/environments`, { name: "qa" });
      expectError(internalClash, 409, "conflict", "name");
    });

    it("the engine's create (§9) is held to 1–100 characters too: an empty or a 101-character name is 400", async () => {
      // "An environment's name is 1–100 characters and unique within its project ... for every create
      // and rename from this part on, the internal create of §9 included."
      const { owner, project } = await createOwnedProject();
      for (const name of ["", "x".repeat(101)]) {
        const res = await internal("POST", `/projects/${project.id}/environments`, { name });
        expectError(res, 400, "bad_input", "name");
      }
      expect(await environmentNames(owner, project.id)).toEqual(["production"]);
      expect(
        (await internal("POST", `/projects/${project.id}/environments`, { name: "y".repeat(100) })).status,
      ).toBe(201);
    });

    it("the same name is fine in another project, of the same organization or another", async () => {
      const { owner, project } = await createOwnedProject();
      const sibling = await createProject(owner);
      const stranger = await createOwnedProject();
      for (const [caller, projectId] of [
        [owner, project.id],
        [owner, sibling.id],
        [stranger.owner, stranger.project.id],
      ] as const) {
        const res = await postEnvironment(caller, projectId, { name: "staging" });
        expect(res.status, res.raw).toBe(201);
      }
    });

    it("a deleted environment's name is free again", async () => {
      const { owner, project } = await createOwnedProject();
      const first = await publicEnvironment(owner, project.id, { name: "temp" });
      expect((await request("DELETE", environmentPath(first.id), { key: owner.key })).status).toBe(204);
      expect((await postEnvironment(owner, project.id, { name: "TEMP" })).status).toBe(201);
    });
  });

  describe("copy_variables_from", () => {
    it("starts with the source's own variables (names, types and values), as its version 1", async () => {
      const { owner, project, source } = await projectWithVariables();
      const before = await variablesWithValues(owner, source.id);
      const sourceVersions = (await versionsOf(owner, source.id)).body.data.length;

      const res = await postEnvironment(owner, project.id, { name: "copy", copy_variables_from: source.id });
      expect(res.status, res.raw).toBe(201);
      const copy = await variablesWithValues(owner, res.body.id);
      expect(copy.values).toEqual({
        API_TOKEN: ["secret", "tok-123"],
        DB_URL: ["secure_string", "postgres://db.internal/app"],
        REGION: ["string", "eu-west-1"],
      });
      expect(copy.values).toEqual(before.values);
      const sourceIds = new Set(before.list.map((v) => v.id));
      for (const v of copy.list) {
        expect(v.environment_id).toBe(res.body.id);
        expect(v.component_id).toBeNull();
        expect(sourceIds.has(v.id)).toBe(false);
      }

      const versions = await versionsOf(owner, res.body.id);
      expect(versions.status, versions.raw).toBe(200);
      expect(versions.body.data.map((v) => v.version)).toEqual([1]);
      const [first] = versions.body.data as [VersionRecord];
      expect(first.scope).toEqual({ type: "environment", id: res.body.id });
      expect(first.changes).toEqual([
        { name: "API_TOKEN", action: "created", type: { from: null, to: "secret" }, value_changed: true },
        { name: "DB_URL", action: "created", type: { from: null, to: "secure_string" }, value_changed: true },
        { name: "REGION", action: "created", type: { from: null, to: "string" }, value_changed: true },
      ]);
      expect(first.actor).toEqual({ type: "api_key", account_id: owner.accountId, api_key_id: owner.keyId });
      const one = await request<VersionRecord>("GET", `${variablesOf(res.body.id)}/versions/1`, {
        key: owner.key,
      });
      expect(one.status, one.raw).toBe(200);
      expect(
        (await request("GET", `${variablesOf(res.body.id)}/versions/2`, { key: owner.key })).status,
      ).toBe(404);

      // Each copy is a variable of the new environment: its value lives under the new environment.
      for (const v of copy.list) expect(v.resource_id).toBe(`/${project.id}/${res.body.id}/_/${v.name}`);

      // The source is untouched.
      expect(await variablesWithValues(owner, source.id)).toEqual(before);
      expect((await versionsOf(owner, source.id)).body.data.length).toBe(sourceVersions);
    });

    it("the copy's version 1 is the create request's (request_id), and no secret value is written in plaintext", async () => {
      const { owner, project, source } = await projectWithVariables();
      const requestId = `copy-${crypto.randomUUID()}`;
      const res = await postEnvironment(
        owner,
        project.id,
        { name: "copy", copy_variables_from: source.id },
        { "x-request-id": requestId },
      );
      expect(res.status, res.raw).toBe(201);
      const [first] = (await versionsOf(owner, res.body.id)).body.data;
      expect(first?.request_id).toBe(requestId);
      for (const table of ["variables", "variable_version_values"]) {
        const { results } = await env.DB.prepare(`SELECT * FROM ${table} WHERE environment_id = ?`)
          .bind(res.body.id)
          .all<Record<string, unknown>>();
        expect(results.length, table).toBeGreaterThan(0);
        const written = JSON.stringify(results);
        expect(written, table).not.toContain("tok-123");
        expect(written, table).not.toContain("postgres://db.internal/app");
      }
    });

    it("copies a large environment whole: 500 variables of every type (one §18 change's most), two changes of them", async () => {
      const { owner, project } = await createOwnedProject();
      const source = await createEnvironment(project.id, "big");
      const types = ["secret", "secure_string", "string"];
      const expected: Record<string, [string, string]> = {};
      for (const half of [0, 1]) {
        const variables: Record<string, { type: string; value: string }> = {};
        for (let i = half * 250; i < (half + 1) * 250; i++) {
          const name = `VAR_${String(i).padStart(3, "0")}`;
          const type = types[i % 3] ?? "string";
          const value = `value-${i}-${"x".repeat(i % 40)}`;
          variables[name] = { type, value };
          expected[name] = [type, value];
        }
        const applied = await request("PATCH", variablesOf(source.id), {
          key: owner.key,
          body: { variables },
        });
        expect(applied.status, applied.raw).toBe(200);
      }
      const res = await postEnvironment(owner, project.id, {
        name: "big copy",
        copy_variables_from: source.id,
      });
      expect(res.status, res.raw).toBe(201);
      // Types from the list, values from the export (one reveal for all 500).
      const exported = await request<string>("GET", `${variablesOf(res.body.id)}/export`, { key: owner.key });
      expect(exported.status, exported.raw).toBe(200);
      const values = Object.fromEntries(
        exported.raw
          .split("\n")
          .filter(Boolean)
          .map((line) => {
            const [, name, value] = /^(\w+)="(.*)"$/.exec(line) ?? [];
            return [name, value];
          }),
      );
      const listed: Record<string, string> = {};
      let after: string | undefined;
      do {
        const page: { body: ListBody } = await request<ListBody>(
          "GET",
          `${variablesOf(res.body.id)}?limit=240${after ? `&after=${encodeURIComponent(after)}` : ""}`,
          { key: owner.key },
        );
        for (const v of page.body.data) listed[v.name] = v.type;
        after = page.body.next_page;
      } while (after);
      expect(Object.keys(listed)).toHaveLength(500);
      expect(Object.fromEntries(Object.keys(listed).map((n) => [n, [listed[n], values[n]]]))).toEqual(
        expected,
      );
      const versions = await versionsOf(owner, res.body.id);
      expect(versions.body.data.map((v) => v.version)).toEqual([1]);
      expect(versions.body.data[0]?.changes).toHaveLength(500);
    });

    it("copies values, not links: a later change of the copy leaves the source as it was", async () => {
      const { owner, project, source } = await projectWithVariables();
      const copy = await publicEnvironment(owner, project.id, { copy_variables_from: source.id });
      const { list } = await variablesWithValues(owner, copy.id);
      const token = list.find((v) => v.name === "API_TOKEN");
      const put = await request("PUT", `/v1/variables/${token?.id}`, {
        key: owner.key,
        body: { name: "API_TOKEN", type: "secret", value: "changed" },
      });
      expect(put.status, put.raw).toBe(200);
      expect((await variablesWithValues(owner, source.id)).values.API_TOKEN).toEqual(["secret", "tok-123"]);
      expect((await variablesWithValues(owner, copy.id)).values.API_TOKEN).toEqual(["secret", "changed"]);
    });

    it("does not copy the source's components' variables (nor its components)", async () => {
      const { owner, project, source } = await projectWithVariables();
      const copy = await publicEnvironment(owner, project.id, { copy_variables_from: source.id });
      const { values } = await variablesWithValues(owner, copy.id);
      expect(Object.keys(values)).not.toContain("COMPONENT_ONLY");
      const components = await request<{ data: unknown[] }>("GET", `${environmentPath(copy.id)}/components`, {
        key: owner.key,
      });
      expect(components.body.data).toEqual([]);
      const row = await env.DB.prepare(
        "SELECT count(*) AS n FROM variables WHERE environment_id = ? AND component_id IS NOT NULL",
      )
        .bind(copy.id)
        .first<{ n: number }>();
      expect(row?.n).toBe(0);
    });

    it("the project's default environment can be the source", async () => {
      const { owner, project } = await createOwnedProject();
      await createVariable(owner, variablesOf(project.default_environment_id), {
        name: "LOG_LEVEL",
        type: "string",
        value: "debug",
      });
      const copy = await publicEnvironment(owner, project.id, {
        copy_variables_from: project.default_environment_id,
      });
      expect((await variablesWithValues(owner, copy.id)).values).toEqual({ LOG_LEVEL: ["string", "debug"] });
    });

    it("a source without own variables gives an empty environment at version 0", async () => {
      const { owner, project } = await createOwnedProject();
      const source = await createEnvironment(project.id);
      const component = await createComponent(source.id);
      await createVariable(owner, componentPath(component.id), { name: "ONLY_COMPONENT" });
      const copy = await publicEnvironment(owner, project.id, { copy_variables_from: source.id });
      expect((await variablesWithValues(owner, copy.id)).list).toEqual([]);
      expect((await versionsOf(owner, copy.id)).body.data).toEqual([]);
    });

    it("must name an environment of the same project: another project's, an unknown or a malformed one is 400, nothing created", async () => {
      const { owner, project, source } = await projectWithVariables();
      const sibling = await createProject(owner);
      const stranger = await createOwnedProject();
      const variablesBefore = await projectRows("variables", project.id);
      for (const from of [
        sibling.default_environment_id,
        stranger.project.default_environment_id,
        UNKNOWN_ID,
        "0123456789abcdef0123456789abcdef",
        "not an id",
      ]) {
        const res = await postEnvironment(owner, project.id, {
          name: unique("env"),
          copy_variables_from: from,
        });
        expectError(res, 400, "bad_input", "copy_variables_from");
      }
      // A source given by another project's owner is still another project's.
      const theirs = await postEnvironment(stranger.owner, stranger.project.id, {
        name: "copy",
        copy_variables_from: source.id,
      });
      expectError(theirs, 400, "bad_input", "copy_variables_from");
      expect((await environmentNames(owner, project.id)).sort()).toEqual(["production", "source"]);
      expect(await environmentNames(stranger.owner, stranger.project.id)).toEqual(["production"]);
      expect(await projectRows("variables", project.id)).toBe(variablesBefore);
    });

    it("a create that fails (a taken name) leaves nothing: no environment, variables, versions or audit entry", async () => {
      const { owner, project, source } = await projectWithVariables();
      const counts = async () =>
        Promise.all(
          ["variables", "variable_versions", "variable_version_values", "environments"].map((t) =>
            projectRows(t, project.id),
          ),
        );
      const before = await counts();
      const requestId = `clash-${crypto.randomUUID()}`;
      const res = await postEnvironment(
        owner,
        project.id,
        { name: "SOURCE", copy_variables_from: source.id },
        { "x-request-id": requestId },
      );
      expectError(res, 409, "conflict", "name");
      expect(await counts()).toEqual(before);
      expect(await rowsOf(requestId)).toEqual([]);
    });

    // The refused batch is a fault of the service's own (a 500, logged as "unhandled error"): each
    // test checks the line it caused, which is kept out of the run's output.
    const errors = captureLogs("error");

    it.each([
      ["the audit entry", "audit_log", "NEW.action = 'createEnvironment'"],
      ["the copy's version", "variable_versions", "1"],
      [
        "the copy's values",
        "variables",
        "NEW.environment_id NOT IN (SELECT id FROM environments WHERE name = 'source')",
      ],
    ])(
      "the environment, its copy and its audit entry are one batch: when %s fails, nothing is left",
      async (_what, table, when) => {
        const { owner, project, source } = await projectWithVariables();
        const counts = async () =>
          Promise.all(
            ["variables", "variable_versions", "variable_version_values", "environments", "audit_log"].map(
              (t) => projectRows(t, project.id),
            ),
          );
        const before = await counts();
        const trigger = `fail_copy_${crypto.randomUUID().replaceAll("-", "")}`;
        await env.DB.prepare(
          `CREATE TRIGGER "${trigger}" BEFORE INSERT ON ${table} WHEN NEW.project_id = '${project.id}' AND ${when}
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
        ).run();
        let res: ApiResponse;
        try {
          res = await request("POST", projectEnvironmentsPath(project.id), {
            key: owner.key,
            body: { name: "atomic", copy_variables_from: source.id },
            // A failed write is a 500 here, which /openapi.json need not describe per route.
            unchecked: true,
          });
        } finally {
          await env.DB.prepare(`DROP TRIGGER IF EXISTS "${trigger}"`).run();
        }
        expect(res.status).toBeGreaterThanOrEqual(500);
        expectRefusedByTrigger(errors.lines(), res);
        expect(await counts()).toEqual(before);
        // And then it is made whole.
        const again = await postEnvironment(owner, project.id, {
          name: "atomic",
          copy_variables_from: source.id,
        });
        expect(again.status, again.raw).toBe(201);
        expect((await versionsOf(owner, again.body.id)).body.data.map((v) => v.version)).toEqual([1]);
      },
    );
  });

  it("an environment made by a project create or by the engine starts empty, at version 0", async () => {
    const { owner, project } = await createOwnedProject();
    const byEngine = await createEnvironment(project.id);
    for (const id of [project.default_environment_id, byEngine.id]) {
      expect((await variablesWithValues(owner, id)).list).toEqual([]);
      expect((await versionsOf(owner, id)).body.data).toEqual([]);
    }
  });

  it("without copy_variables_from the environment starts empty, at version 0", async () => {
    const { owner, project } = await createOwnedProject();
    await createVariable(owner, variablesOf(project.default_environment_id), { name: "NOT_COPIED" });
    const made = await publicEnvironment(owner, project.id);
    expect((await variablesWithValues(owner, made.id)).list).toEqual([]);
    const versions = await versionsOf(owner, made.id);
    expect(versions.status).toBe(200);
    expect(versions.body.data).toEqual([]);
    expectError(
      await request("GET", `${variablesOf(made.id)}/versions/1`, { key: owner.key }),
      404,
      "not_found",
    );
  });

  it("writes one audit entry, createEnvironment, about the new environment (with a copy too)", async () => {
    const { owner, project, source } = await projectWithVariables();
    for (const body of [{ name: "plain" }, { name: "copied", copy_variables_from: source.id }]) {
      const requestId = `create-env-${crypto.randomUUID()}`;
      const res = await postEnvironment(owner, project.id, body, { "x-request-id": requestId });
      expect(res.status, res.raw).toBe(201);
      const rows = await rowsOf(requestId);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        action: "createEnvironment",
        target_type: "environment",
        target_id: res.body.id,
        project_id: project.id,
        org_id: owner.orgId,
        actor_type: "api_key",
        actor_account_id: owner.accountId,
        actor_api_key_id: owner.keyId,
      });
      const changes = JSON.parse(rows[0]?.changes as string) as Record<
        string,
        { from: unknown; to: unknown }
      >;
      expect(changes.name).toEqual({ from: null, to: body.name });
      // Never a variable value (§14), the copied ones included.
      for (const value of ["tok-123", "postgres://db.internal/app", "eu-west-1"]) {
        expect(JSON.stringify(rows[0])).not.toContain(value);
      }
    }
  });

  it("an Idempotency-Key replays the create: one environment, the same answer and Location", async () => {
    const { owner, project, source } = await projectWithVariables();
    const headers = { "idempotency-key": crypto.randomUUID() };
    const body = { name: "replayed", copy_variables_from: source.id };
    const first = await postEnvironment(owner, project.id, body, headers);
    const retry = await postEnvironment(owner, project.id, body, headers);
    expect(first.status, first.raw).toBe(201);
    expect([retry.status, retry.raw, retry.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));
    expect(retry.headers.get("etag")).toBe(first.headers.get("etag"));
    expect((await environmentNames(owner, project.id)).filter((n) => n === "replayed")).toHaveLength(1);
    expect((await versionsOf(owner, first.body.id)).body.data.map((v) => v.version)).toEqual([1]);
    const other = await postEnvironment(owner, project.id, { name: "another" }, headers);
    expectError(other, 400, "bad_input", "header.idempotency-key");
    expect(await environmentNames(owner, project.id)).not.toContain("another");
  });

  it("needs project owner: org admins and project owners create; contributors and viewers 403 forbidden; non-members 404", async () => {
    const w = await createOwnedProject();
    const { viewer, contributor, outsider } = await projectRoleCallers(w);
    const projectOwner = await projectCaller(w.org, w.owner, w.project, "owner");
    const admin = await createCaller(w.org, "admin");
    expectError(await postEnvironment(contributor, w.project.id, { name: "c" }), 403, "forbidden");
    expectError(await postEnvironment(viewer, w.project.id, { name: "v" }), 403, "forbidden");
    expectError(await postEnvironment(outsider, w.project.id, { name: "o" }), 404, "not_found");
    expect(await environmentNames(w.owner, w.project.id)).toEqual(["production"]);
    expect((await postEnvironment(projectOwner, w.project.id, { name: "by-owner" })).status).toBe(201);
    expect((await postEnvironment(admin, w.project.id, { name: "by-admin" })).status).toBe(201);
  });

  it("publishes x-required-scope environments:write; a key without it is 403 naming it, one with only it creates", async () => {
    await expectPublished(
      "post",
      "/v1/projects/{project_id}/environments",
      "createEnvironment",
      "environments:write",
    );
    const { owner, project } = await createOwnedProject();
    expectMissingScope(
      await postEnvironment(await keyWithout(owner, "environments:write"), project.id, { name: "x" }),
      "environments:write",
    );
    expectMissingScope(
      await postEnvironment(await keyWith(owner, "environments:read"), project.id, { name: "x" }),
      "environments:write",
    );
    expect(await environmentNames(owner, project.id)).toEqual(["production"]);
    const res = await postEnvironment(await keyWith(owner, "environments:write"), project.id, { name: "x" });
    expect(res.status, res.raw).toBe(201);
  });

  it("a key restricted to another project is 404; an unknown project 404; a malformed project ID 400", async () => {
    const { owner, project } = await createOwnedProject();
    expectError(
      await postEnvironment(await keyForAnotherProject(owner), project.id, { name: "x" }),
      404,
      "not_found",
    );
    expectError(await postEnvironment(owner, UNKNOWN_ID, { name: "x" }), 404, "not_found");
    expectError(await postEnvironment(owner, "nope!", { name: "x" }), 400, "bad_input", "project_id");
    expect(await environmentNames(owner, project.id)).toEqual(["production"]);
  });

  runCommonRouteTests("POST /v1/projects/{project_id}/environments", async () => {
    const { owner, project } = await createOwnedProject();
    return {
      method: "POST",
      path: projectEnvironmentsPath(project.id),
      body: { name: unique("env") },
      caller: owner,
    };
  });
});
