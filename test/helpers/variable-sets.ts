/** Variable sets (API_CONTRACT §18): changes, versions, restores and exports of a scope, through the real Worker. */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { VariableChangeResult, VariableVersionRecord } from "../../src/schemas/variable-set";
import { type ApiResponse, request } from "./api";
import type { Caller } from "./factories";
import { componentPath, environmentPath, type ListBody, setup } from "./variables";

export type ChangeResult = VariableChangeResult;
export type VersionRecord = VariableVersionRecord;
export type VersionList = { data: VersionRecord[]; has_more: boolean; next_page?: string };
export type ScopeKind = "environment" | "component";

/** `setup()`'s world, and the variables path of its environment and of its component. */
export async function setsWorld() {
  const world = await setup();
  const paths: Record<ScopeKind, string> = {
    environment: environmentPath(world.environmentId),
    component: componentPath(world.componentId),
  };
  return { ...world, paths };
}

/** `PATCH {scope}/variables`. */
export const applyChanges = (caller: Caller, base: string, body: unknown, headers?: Record<string, string>) =>
  request<ChangeResult>("PATCH", base, { key: caller.key, body, headers });

/** `PATCH {scope}/variables` that must succeed. */
export async function applied(caller: Caller, base: string, body: unknown): Promise<ChangeResult> {
  const res = await applyChanges(caller, base, body);
  if (res.status !== 200) throw new Error(`PATCH ${base} → ${res.status} ${res.raw}`);
  return res.body;
}

export const listVersions = (caller: Caller, base: string, query = "") =>
  request<VersionList>("GET", `${base}/versions${query}`, { key: caller.key });

export const getVersion = (caller: Caller, base: string, version: number | string) =>
  request<VersionRecord>("GET", `${base}/versions/${version}`, { key: caller.key });

export const restore = (caller: Caller, base: string, version: number | string, body?: unknown) =>
  request<ChangeResult>("POST", `${base}/versions/${version}/restore`, { key: caller.key, body });

export const exportScope = (caller: Caller, base: string, headers?: Record<string, string>) =>
  request<string>("GET", `${base}/export`, { key: caller.key, headers });

/** Every version number of the scope, oldest first (all pages). */
export async function versionNumbers(caller: Caller, base: string): Promise<number[]> {
  const out: number[] = [];
  let after: string | undefined;
  do {
    const query = `?sort_by=created_at&limit=240${after ? `&after=${encodeURIComponent(after)}` : ""}`;
    const res = await listVersions(caller, base, query);
    expect(res.status, res.raw).toBe(200);
    out.push(...res.body.data.map((v) => v.version));
    after = res.body.next_page;
  } while (after);
  return out;
}

/** 1…n. */
export const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The scope's variables as `{NAME: [type, value]}`: the list for the types, the export for the values. */
export async function scopeState(caller: Caller, base: string): Promise<Record<string, [string, string]>> {
  const list = await request<ListBody>("GET", `${base}?limit=240`, { key: caller.key });
  expect(list.body.has_more).toBe(false);
  const exported = await exportScope(caller, base);
  expect(exported.status, exported.raw).toBe(200);
  const values = new Map<string, string>();
  for (const line of exported.raw.split("\n").filter(Boolean)) {
    const [, name, quoted] = /^([A-Za-z_]\w*)="((?:[^"\\]|\\.)*)"$/.exec(line) ?? [];
    if (!name || quoted === undefined) throw new Error(`not an export line: ${line}`);
    // Read here independently of src/lib/dotenv.ts: the four escapes of API_CONTRACT §18.
    values.set(
      name,
      quoted.replace(/\\(.)/g, (_, c: string) => ({ n: "\n", r: "\r" })[c] ?? c),
    );
  }
  return Object.fromEntries(list.body.data.map((v) => [v.name, [v.type, values.get(v.name) ?? "?"]]));
}

/** `{NAME: {type, value}}` for a change request. */
export const entries = (state: Record<string, [string, string]>) =>
  Object.fromEntries(Object.entries(state).map(([name, [type, value]]) => [name, { type, value }]));

/** Every text column of every history and variable row of a project, for scans for plaintext. */
export async function storedText(projectId: string): Promise<string> {
  const tables = ["variables", "variable_versions", "variable_version_values", "audit_log"];
  const results = await env.DB.batch(
    tables.map((table) => env.DB.prepare(`SELECT * FROM ${table} WHERE project_id = ?`).bind(projectId)),
  );
  return JSON.stringify(results.map((r) => r.results));
}

export type { ApiResponse };
