/**
 * Operations on a whole scope (API_CONTRACT §18) hold what they need in memory, not the scope (a
 * scope may hold 20,000 values of 64 KiB, §29; an isolate has 128 MB for every request it runs):
 * - an export is the scope as it stood at one version, whatever its size and whatever changes
 *   while it is sent, read a page at a time (src/services/variables/export.ts `exportVariables`): a
 *   scope larger than a page is a stream that reads each page as the client takes the one before;
 * - a replace reads the values of the names it gives, a restore those of the names the scope held
 *   at that version, and only the names and types of the others (which they delete);
 * - a deployment's configuration and a promotion's plan read no value, a configuration's diff
 *   only `string` values.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { EXPORT_PAGE_BYTES } from "../../src/services/variables/export";
import { interceptStatements, once } from "../helpers/api";
import { measuringD1, recordingD1 } from "../helpers/d1-trips";
import { engineConfigOk } from "../helpers/deployment-config";
import { newDeployment, PATCH, reportOk } from "../helpers/engine";
import type { Caller } from "../helpers/factories";
import {
  createDeployment,
  createEnvironment,
  createOwnedProject,
  createProjectWithStack,
  createStack,
  unique,
} from "../helpers/factories";
import { capturedWhile } from "../helpers/logs";
import { applied, exportScope, setsWorld } from "../helpers/variable-sets";
import { environmentPath } from "../helpers/variables";

/** A value of 64 KiB (the most §3 allows), different for each name. */
const bigValue = (name: string) => `${name}:`.padEnd(65_536, name.slice(-1));

/** `count` secret variables of 64 KiB (`V00`…), ten per change (a body stays under 1 MiB). */
async function bigScope(owner: Caller, base: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `V${String(i).padStart(2, "0")}`);
  for (let i = 0; i < count; i += 10) {
    const batch = names.slice(i, i + 10);
    await applied(owner, base, {
      variables: Object.fromEntries(batch.map((name) => [name, { type: "secret", value: bigValue(name) }])),
    });
  }
  return names;
}

const line = (name: string, value: string) => `${name}="${value}"\n`;

/** A request through the app in this isolate, with `bindings`: its body is the very stream the service made. */
async function fetchApp(
  caller: Caller,
  method: string,
  path: string,
  bindings: Partial<Env>,
  body?: unknown,
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { "x-api-key": caller.key };
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await createApp().fetch(
    new Request(`http://api.test${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    { ...env, ...bindings },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

const exportWith = (caller: Caller, base: string, bindings: Partial<Env>) =>
  fetchApp(caller, "GET", `${base}/export`, bindings);

/** The SQL of an export's page (what `interceptStatements` keys on), read from an export made to find it. */
async function pageStatement(caller: Caller, base: string): Promise<string> {
  const recording = recordingD1();
  const res = await exportWith(caller, base, recording.env);
  await res.text();
  const page = recording.trips.flatMap((trip) => trip.sql).find((sql) => sql.includes("AS pin cross join"));
  if (!page) throw new Error(`no page statement among ${JSON.stringify(recording.trips)}`);
  return page;
}

describe("exporting a scope larger than a page", () => {
  it("is the scope at the version it started from, whatever changes while it is read", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const names = await bigScope(owner, base, 30);
    const before = names.map((name) => line(name, bigValue(name))).join("");
    expect(before.length).toBeGreaterThan(EXPORT_PAGE_BYTES * 1.5);
    const page = await pageStatement(owner, base);
    // After the export has read the scope's names and version, before it reads any value: a
    // change that updates the last name, deletes one in the middle and adds one.
    let changed = false;
    const DB = interceptStatements({
      [page]: once(async () => {
        await applied(owner, base, {
          variables: {
            V29: { type: "secret", value: "changed" },
            V15: null,
            V99: { type: "string", value: "added" },
          },
        });
        changed = true;
      }),
    });
    const res = await exportWith(owner, base, { DB });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.text()).toBe(before);
    expect(changed).toBe(true);
    // The next export sees the change.
    const after = await exportScope(owner, base);
    expect(after.raw).toContain(line("V29", "changed"));
    expect(after.raw).not.toContain('V15="');
    expect(after.raw.endsWith(line("V99", "added"))).toBe(true);
  });

  it("reads each page as the client takes the one before (a page in memory, not the scope)", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    const names = await bigScope(owner, base, 30);
    const pages: string[] = [];
    const recording = recordingD1(env, {
      trip: (trip) => pages.push(...trip.sql.filter((sql) => sql.includes("AS pin cross join"))),
    });
    const res = await exportWith(owner, base, recording.env);
    expect(res.status).toBe(200);
    // Before the client reads anything, only the first page has been read (its errors are the answer's).
    expect(pages).toHaveLength(1);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = "";
    let chunks = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks++;
      text += decoder.decode(value, { stream: true });
      // A chunk taken has had its page read, and no page beyond the next one.
      expect(pages.length).toBeLessThanOrEqual(chunks + 1);
      expect(value.byteLength).toBeLessThanOrEqual(EXPORT_PAGE_BYTES + 65_536 + 16);
    }
    expect(chunks).toBe(pages.length);
    expect(chunks).toBeGreaterThanOrEqual(2);
    expect(text).toBe(names.map((name) => line(name, bigValue(name))).join(""));
  });

  it("ends with an error, never a file with names missing, when a later page finds a name gone", async () => {
    const { owner, paths, environmentId } = await setsWorld();
    const base = paths.environment;
    await bigScope(owner, base, 30);
    const page = await pageStatement(owner, base);
    // The second page's read: the scope's history removed under it, as the end of a move removes
    // an organization from the database it left.
    let pagesRead = 0;
    const DB = interceptStatements({
      [page]: async () => {
        pagesRead++;
        if (pagesRead === 2) {
          await env.DB.prepare(
            "DELETE FROM variable_version_values WHERE environment_id = ? AND name = 'V29'",
          )
            .bind(environmentId)
            .run();
        }
      },
    });
    const { lines } = await capturedWhile(["error"], async () => {
      const res = await exportWith(owner, base, { DB });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow(/V29 not found at version 3|names not found/);
    });
    expect(pagesRead).toBe(3);
    expect(lines).toEqual([
      expect.objectContaining({ level: "error", msg: "variables export failed while sending" }),
    ]);
  });
});

describe("replacing a scope", () => {
  it("reads the values of the names it gives, not of those it deletes", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await bigScope(owner, base, 20);
    const { DB, read } = measuringD1();
    const replaced = await fetchApp(
      owner,
      "PATCH",
      base,
      { DB },
      {
        mode: "replace",
        variables: { V00: { type: "secret", value: bigValue("V00") } },
      },
    );
    const body = (await replaced.json()) as { changes: { name: string; action: string }[] };
    expect(replaced.status).toBe(200);
    expect(body.changes).toHaveLength(20);
    expect(body.changes[0]).toMatchObject({ name: "V00", action: "unchanged" });
    expect(body.changes.slice(1).every((c) => c.action === "deleted")).toBe(true);
    // V00's value (an envelope of 64 KiB, a third larger as base64), and nothing of the 19 others.
    expect(read.bytes).toBeGreaterThan(65_536);
    expect(read.bytes).toBeLessThan(2 * 65_536);
    expect((await exportScope(owner, base)).raw).toBe(line("V00", bigValue("V00")));
  });
});

describe("restoring a scope", () => {
  it("reads the values of the names it held at that version, not of those made since", async () => {
    const { owner, paths } = await setsWorld();
    const base = paths.environment;
    await applied(owner, base, { variables: { FIRST: { type: "secret", value: "first" } } });
    await bigScope(owner, base, 20);
    const { DB, read } = measuringD1();
    const restored = await fetchApp(owner, "POST", `${base}/versions/1/restore`, { DB }, {});
    const body = (await restored.json()) as { changes: { name: string; action: string }[] };
    expect(restored.status).toBe(200);
    expect(body.changes.filter((c) => c.action === "deleted")).toHaveLength(20);
    expect(body.changes.find((c) => c.name === "FIRST")?.action).toBe("unchanged");
    // FIRST's envelope (in the scope and in the version): nothing of the 20 made since.
    expect(read.bytes).toBeLessThan(16_384);
    expect((await exportScope(owner, base)).raw).toBe(line("FIRST", "first"));
  });
});

describe("a deployment's configuration", () => {
  it("is read without values by its viewers, and its diff reads the values of `string` variables only", async () => {
    const { owner, environmentId, stack } = await createProjectWithStack();
    const base = environmentPath(environmentId);
    await bigScope(owner, base, 10);
    await applied(owner, base, { variables: { PLAIN: { type: "string", value: "plain" } } });
    const deployment = await createDeployment(environmentId, [stack.id]);
    await applied(owner, base, { variables: { PLAIN: { type: "string", value: "changed" } } });
    const { DB, read } = measuringD1();
    const config = await fetchApp(owner, "GET", `/v1/deployments/${deployment.id}/config`, { DB });
    expect(config.status).toBe(200);
    const body = (await config.json()) as { environment: { variables: { name: string; type: string }[] } };
    expect(body.environment.variables).toHaveLength(11);
    expect(read.bytes).toBeLessThan(8_192);
    read.bytes = 0;
    const diff = await fetchApp(owner, "GET", `/v1/deployments/${deployment.id}/config/diff`, { DB });
    expect(diff.status).toBe(200);
    const { changes } = (await diff.json()) as { changes: { name: string; value_changed: boolean }[] };
    expect(changes).toEqual([expect.objectContaining({ name: "PLAIN", value_changed: true })]);
    expect(read.bytes).toBeLessThan(8_192);
    // The engine's read has every value.
    const engine = await engineConfigOk(deployment.id);
    expect(engine.environment.variables.find((v) => v.name === "V09")?.value).toBe(bigValue("V09"));
  });
});

describe("a promotion's plan", () => {
  it("compares the names of the original's configuration without reading a value", async () => {
    const { owner, project } = await createOwnedProject();
    const source = project.default_environment_id;
    await bigScope(owner, environmentPath(source), 10);
    const target = (await createEnvironment(project.id, unique("staging"))).id;
    const web = await createStack(source, { template_id: "web" });
    await createStack(target, { template_id: "web" });
    const created = await newDeployment(source, { stack_ids: [web.id], data: { patch: PATCH } });
    await reportOk(created.body.id, { status: "in_progress" });
    await reportOk(created.body.id, { status: "succeeded" });
    const { DB, read } = measuringD1();
    const plan = await fetchApp(
      owner,
      "POST",
      `/v1/deployments/${created.body.id}/promote`,
      { DB },
      {
        environment_id: target,
        dry_run: true,
      },
    );
    expect(plan.status).toBe(200);
    const body = (await plan.json()) as { variables: { missing: string[] }[] };
    expect(body.variables[0]?.missing).toHaveLength(10);
    expect(read.bytes).toBeLessThan(8_192);
  });
});
