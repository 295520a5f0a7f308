/**
 * Environments, components and stacks in the public API (API_CONTRACT §23, with §4, §5, §12 and
 * §15 as they apply): the records, the requests, and checks the seven environment operations and
 * the two component and stack reads share. Written from the contract's words, not from src.
 */
import { env } from "cloudflare:test";
import { expect, it } from "vitest";
import { type ApiResponse, request } from "./api";
import { type ErrorBody, expectError } from "./expect";
import { type Caller, createProject, scopedKey, unique } from "./factories";
import { operations } from "./openapi";
import { byCreated, walkPages } from "./pages";
import { sleep } from "./wait";

export type EnvironmentBody = {
  id: string;
  project_id: string;
  name: string;
  created_at: string;
  updated_at: string;
  current_deployment_id: string | null;
  config_pending: boolean;
};
export type ComponentBody = { id: string; environment_id: string; name: string; created_at: string };
export type StackBody = {
  id: string;
  environment_id: string;
  name: string;
  template_id: string;
  created_at: string;
};
export type Envelope<T> = { data: T[]; has_more: boolean; next_page?: string };

/** The exact top-level fields of each record (§23). */
export const ENVIRONMENT_FIELDS = [
  "config_pending",
  "created_at",
  "current_deployment_id",
  "id",
  "name",
  "project_id",
  "updated_at",
];
export const COMPONENT_FIELDS = ["created_at", "environment_id", "id", "name"];
export const STACK_FIELDS = ["created_at", "environment_id", "id", "name", "template_id"];

/** §12: a strong ETag is quoted and opaque; a weak one is `W/` and a quoted tag. */
export const STRONG_ETAG = /^"[^"]+"$/;
export const WEAK_ETAG = /^W\/"[^"]+"$/;

/** Every scope of §15, §21 and part four's two. */
export const ALL_SCOPES = [
  "projects:read",
  "projects:write",
  "members:read",
  "members:write",
  "integrations:read",
  "integrations:write",
  "variables:read",
  "variables:write",
  "variables:reveal",
  "deployments:read",
  "deployments:write",
  "resources:read",
  "events:read",
  "audit:read",
  "orgs:read",
  "orgs:write",
  "api-keys:read",
  "api-keys:write",
  "environments:read",
  "environments:write",
];

type Headers = Record<string, string>;
type Reply<T> = ApiResponse<T & ErrorBody>;

export const environmentPath = (id: string) => `/v1/environments/${id}`;
export const projectEnvironmentsPath = (projectId: string) => `/v1/projects/${projectId}/environments`;

/** `POST /v1/projects/{project_id}/environments`, answered as it is. */
export const postEnvironment = (
  caller: Caller | string,
  projectId: string,
  body: unknown,
  headers: Headers = {},
): Promise<Reply<EnvironmentBody>> =>
  request("POST", projectEnvironmentsPath(projectId), { key: keyOf(caller), body, headers });

/** A new environment through the public API (it must be created). */
export async function publicEnvironment(
  caller: Caller,
  projectId: string,
  fields: Record<string, unknown> = {},
): Promise<EnvironmentBody> {
  const res = await postEnvironment(caller, projectId, { name: unique("env"), ...fields });
  if (res.status !== 201) throw new Error(`create environment → ${res.status} ${res.raw}`);
  return res.body;
}

export const getEnvironment = (caller: Caller | string, id: string, headers: Headers = {}) =>
  request<EnvironmentBody & ErrorBody>("GET", environmentPath(id), { key: keyOf(caller), headers });

export const patchEnvironment = (caller: Caller | string, id: string, body: unknown, headers: Headers = {}) =>
  request<EnvironmentBody & ErrorBody>("PATCH", environmentPath(id), { key: keyOf(caller), body, headers });

export const deleteEnvironment = (caller: Caller | string, id: string, headers: Headers = {}) =>
  request<ErrorBody>("DELETE", environmentPath(id), { key: keyOf(caller), headers });

const keyOf = (caller: Caller | string) => (typeof caller === "string" ? caller : caller.key);

/** The environment as its owner reads it (it must exist). */
export async function readEnvironment(caller: Caller, id: string): Promise<EnvironmentBody> {
  const res = await getEnvironment(caller, id);
  if (res.status !== 200) throw new Error(`read environment → ${res.status} ${res.raw}`);
  return res.body;
}

/** The names of a project's environments as its owner lists them (one page of 240). */
export async function environmentNames(caller: Caller, projectId: string): Promise<string[]> {
  const res = await request<Envelope<EnvironmentBody>>(
    "GET",
    `${projectEnvironmentsPath(projectId)}?limit=240`,
    {
      key: caller.key,
    },
  );
  expect(res.status, res.raw).toBe(200);
  return res.body.data.map((e) => e.name);
}

/** Rows of `table` whose `environment_id` is `environmentId`, read straight from D1. */
export async function rowsIn(table: string, environmentId: string): Promise<number> {
  const row = await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE environment_id = ?`)
    .bind(environmentId)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/**
 * The operation /openapi.json publishes for `method pathTemplate`: its operationId (the audit
 * log's `action`, §14), its `x-required-scope` (§15) and its rate-limit policy, `default` unless
 * named (part four's introduction).
 */
export async function expectPublished(
  method: string,
  pathTemplate: string,
  operationId: string,
  scope: string,
) {
  const op = (await operations()).find((o) => o.method === method && o.path === pathTemplate);
  expect(op, `${method} ${pathTemplate} is in /openapi.json`).toBeDefined();
  const operation = op?.operation as Record<string, unknown> | undefined;
  expect(operation?.operationId).toBe(operationId);
  expect(operation?.["x-required-scope"]).toBe(scope);
  expect(operation?.["x-rate-limit-policy"]).toBe("default");
}

/** A key of `caller`'s account holding every scope but `scope`. */
export async function keyWithout(caller: Caller, scope: string): Promise<string> {
  return (await scopedKey(caller, { scopes: ALL_SCOPES.filter((s) => s !== scope) })).key;
}

/** A key of `caller`'s account holding exactly `scopes`. */
export async function keyWith(caller: Caller, ...scopes: string[]): Promise<string> {
  return (await scopedKey(caller, { scopes })).key;
}

/** A key of `caller`'s account restricted (§15 `project_ids`) to a new project of the same organization. */
export async function keyForAnotherProject(caller: Caller): Promise<string> {
  const other = await createProject(caller);
  return (await scopedKey(caller, { project_ids: [other.id] })).key;
}

/** §15: a key without the scope is `403 forbidden`, its message naming the scope. */
export function expectMissingScope(res: { status: number; body: unknown; raw?: string }, scope: string) {
  const body = expectError(res, 403, "forbidden");
  expect(body.message).toContain(scope);
}

/** §12: a 200 of one record has a strong ETag; If-None-Match with it (or `*`) is 304 without a body. */
export async function expectRecordEtag(key: string, path: string): Promise<string> {
  const res = await request("GET", path, { key });
  expect(res.status, res.raw).toBe(200);
  const etag = res.headers.get("etag") ?? "";
  expect(etag).toMatch(STRONG_ETAG);
  await expectNotModified(key, path, etag);
  await expectNotModified(key, path, "*");
  // Weak comparison: the weak form of the same tag matches too, and so does a list holding it.
  await expectNotModified(key, path, `W/${etag}`);
  await expectNotModified(key, path, `"some-other-tag", ${etag}`);
  const other = await request("GET", path, { key, headers: { "if-none-match": '"not-the-current-tag"' } });
  expect(other.status).toBe(200);
  expect(other.headers.get("etag")).toBe(etag);
  return etag;
}

/** §12: `If-None-Match` matching the current ETag is 304, no body, with the ETag, x-request-id and rate-limit headers. */
export async function expectNotModified(key: string, path: string, ifNoneMatch: string) {
  const res = await request("GET", path, { key, headers: { "if-none-match": ifNoneMatch } });
  expect(res.status, `If-None-Match: ${ifNoneMatch} → ${res.raw}`).toBe(304);
  expect(res.raw).toBe("");
  expect(res.headers.get("etag")).toMatch(/^(W\/)?"[^"]+"$/);
  expect(res.headers.get("x-request-id")).toBeTruthy();
  expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
  expect(res.headers.get("x-ratelimit-remaining")).toBeTruthy();
}

/** What a list's §4 checks need: a caller, the list's path, the items it holds, and a way to add one. */
export type ListWorld = {
  key: string;
  path: string;
  items: Array<{ id: string; created_at: string }>;
  add: () => Promise<void>;
};

const asc = (items: ListWorld["items"]) => [...items].sort(byCreated).map((i) => i.id);

type Page = Envelope<{ id: string; created_at: string }>;
const page = (key: string, path: string, query: string) =>
  request<Page & ErrorBody>("GET", `${path}?${query}`, { key });

/**
 * API_CONTRACT §4 for one list (and §12's weak ETag): `world` makes a list of 23 items (more than
 * the default page) and answers them.
 */
export function runListRules(name: string, world: () => Promise<ListWorld>) {
  it(`${name}: default -created_at (ties by id, descending), limit 20, next_page standard base64, omitted at the end`, async () => {
    const w = await world();
    expect(w.items.length).toBeGreaterThan(20);
    const first = await page(w.key, w.path, "");
    expect(first.status, first.raw).toBe(200);
    expect(first.body.data.map((i) => i.id)).toEqual(asc(w.items).reverse().slice(0, 20));
    expect(first.body.has_more).toBe(true);
    expect(first.body.next_page).toMatch(/^[A-Za-z0-9+/=]+$/);
    const second = await page(w.key, w.path, `after=${encodeURIComponent(first.body.next_page ?? "")}`);
    expect(second.body.data.map((i) => i.id)).toEqual(asc(w.items).reverse().slice(20));
    expect(second.body.has_more).toBe(false);
    expect(second.body).not.toHaveProperty("next_page");
  });

  it(`${name}: limit is 1–240; anything else is 400`, async () => {
    const w = await world();
    for (const limit of ["1", "240"]) {
      const res = await page(w.key, w.path, `limit=${limit}`);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data.length).toBe(Math.min(Number(limit), w.items.length));
    }
    for (const limit of ["0", "241", "-1", "abc", "1.5"]) {
      expectError(await page(w.key, w.path, `limit=${limit}`), 400, "bad_input", "limit");
    }
  });

  it(`${name}: sort_by created_at and +created_at ascending, -created_at descending; others 400`, async () => {
    const w = await world();
    const ascending = asc(w.items);
    for (const sort of ["created_at", "%2Bcreated_at"]) {
      const res = await page(w.key, w.path, `limit=240&sort_by=${sort}`);
      expect(
        res.body.data.map((i) => i.id),
        sort,
      ).toEqual(ascending);
    }
    const desc = await page(w.key, w.path, "limit=240&sort_by=-created_at");
    expect(desc.body.data.map((i) => i.id)).toEqual([...ascending].reverse());
    for (const sort of ["name", "id", "-name", "created"]) {
      expectError(await page(w.key, w.path, `sort_by=${sort}`), 400, "bad_input", "sort_by");
    }
  });

  it(`${name}: cursors walk every order without repeating or skipping`, async () => {
    const w = await world();
    const ascending = asc(w.items);
    expect(await walkPages(w.key, w.path, "created_at", 4)).toEqual(ascending);
    expect(await walkPages(w.key, w.path, "+created_at", 5)).toEqual(ascending);
    expect(await walkPages(w.key, w.path, "-created_at", 3)).toEqual([...ascending].reverse());
  });

  it(`${name}: a walk made while items are added neither repeats nor skips one that existed throughout`, async () => {
    const w = await world();
    for (const sort of ["created_at", "-created_at"]) {
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 0; pages < 50; pages++) {
        const cursor = after ? `&after=${encodeURIComponent(after)}` : "";
        const res = await page(w.key, w.path, `limit=4&sort_by=${sort}${cursor}`);
        expect(res.status, res.raw).toBe(200);
        seen.push(...res.body.data.map((i) => i.id));
        await w.add();
        if (!res.body.has_more) break;
        after = res.body.next_page;
      }
      expect(new Set(seen).size, sort).toBe(seen.length);
      const existing = new Set(w.items.map((i) => i.id));
      expect(seen.filter((id) => existing.has(id)).sort(), sort).toEqual([...existing].sort());
    }
  });

  it(`${name}: a cursor that does not decode or is of another order is 400; URL-safe and space-for-plus are read`, async () => {
    const w = await world();
    for (const after of ["%%%", "bm90IGEgY3Vyc29y", "e30=", "!!"]) {
      expectError(await page(w.key, w.path, `after=${after}`), 400, "bad_input");
    }
    const first = await page(w.key, w.path, "limit=2&sort_by=created_at");
    const cursor = first.body.next_page ?? "";
    const expected = asc(w.items).slice(2, 4);
    // created_at and +created_at are one order.
    const plus = await page(
      w.key,
      w.path,
      `limit=2&sort_by=%2Bcreated_at&after=${encodeURIComponent(cursor)}`,
    );
    expect(plus.body.data.map((i) => i.id)).toEqual(expected);
    // Another order (the default one included) refuses it.
    for (const other of ["sort_by=-created_at&", ""]) {
      expectError(
        await page(w.key, w.path, `limit=2&${other}after=${encodeURIComponent(cursor)}`),
        400,
        "bad_input",
      );
    }
    const urlSafe = cursor.replaceAll("+", "-").replaceAll("/", "_");
    const safe = await page(w.key, w.path, `limit=2&sort_by=created_at&after=${encodeURIComponent(urlSafe)}`);
    expect(safe.status, safe.raw).toBe(200);
    expect(safe.body.data.map((i) => i.id)).toEqual(expected);
    // A raw `+` in a query string arrives as a space.
    const spaced = encodeURIComponent(cursor).replaceAll("%2B", "+");
    const withSpace = await page(w.key, w.path, `limit=2&sort_by=created_at&after=${spaced}`);
    expect(withSpace.status, withSpace.raw).toBe(200);
    expect(withSpace.body.data.map((i) => i.id)).toEqual(expected);
  });

  it(`${name}: a weak ETag of the body; If-None-Match is 304 until the list changes`, async () => {
    const w = await world();
    const res = await page(w.key, w.path, "");
    const etag = res.headers.get("etag") ?? "";
    expect(etag).toMatch(WEAK_ETAG);
    await expectNotModified(w.key, w.path, etag);
    await expectNotModified(w.key, w.path, "*");
    // Weak comparison: the tag without its W/ matches too.
    await expectNotModified(w.key, w.path, etag.slice(2));
    await w.add();
    const changed = await request("GET", w.path, { key: w.key, headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).toMatch(WEAK_ETAG);
    expect(changed.headers.get("etag")).not.toBe(etag);
  });
}

/** Sleeps `ms`: for creations whose order must show in distinct `created_at` milliseconds. */
export const pause = (ms = 3) => sleep(ms);
