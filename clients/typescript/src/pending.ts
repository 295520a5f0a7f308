/**
 * The operations of API_CONTRACT §18–§21 (variable sets, the deployment timeline and wait,
 * redeploy, keys that make keys), typed by hand from the contract in openapi-typescript's shape
 * until the service's `/openapi.json` documents them. `Paths` (below) lays these under the
 * generated `paths`: a method the generated types define always wins, so after
 * `npm run client:generate` picks a route up its entry here is dead and can be deleted (the
 * helpers and the CLI, written against `Paths`, then type-check against the generated shape).
 */
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];
type Id = string;

type ErrorContent = {
  headers: { [name: string]: unknown };
  content: { "application/json": Schemas["Error"] };
};
type Errors = {
  400: ErrorContent;
  401: ErrorContent;
  403: ErrorContent;
  404: ErrorContent;
  409: ErrorContent;
  429: ErrorContent;
  500: ErrorContent;
};
type Json<T> = { headers: { [name: string]: unknown }; content: { "application/json": T } };
type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type ListQuery = { after?: string; limit?: number; sort_by?: "created_at" | "-created_at" | "+created_at" };
type Unused = {
  get?: never;
  put?: never;
  post?: never;
  delete?: never;
  options?: never;
  head?: never;
  patch?: never;
  trace?: never;
};
/** A path item that defines `Ops` and, like the generator's, says `?: never` of the other methods. */
type Item<Ops> = Omit<Unused, keyof Ops> & Ops;
type NoParams = { query?: never; header?: never; path?: never; cookie?: never };

export type PendingSchemas = {
  /** §18: one name's fate in a change. */
  VariableChange: {
    name: string;
    action: "created" | "updated" | "deleted" | "unchanged";
    type: { from: Schemas["Variable"]["type"] | null; to: Schemas["Variable"]["type"] | null };
    value_changed: boolean;
  };
  /** §18: what a change did, or (dry run) would do. */
  VariableChangeResult: {
    version: number;
    dry_run: boolean;
    changes: PendingSchemas["VariableChange"][];
  };
  /** §18: `PATCH {scope}/variables`; exactly one of `variables` and `dotenv`. */
  VariableChangeRequest: {
    variables?: { [name: string]: { type: Schemas["Variable"]["type"]; value: string } | null };
    dotenv?: string;
    type?: Schemas["Variable"]["type"];
    mode?: "merge" | "replace";
    base_version?: number;
    dry_run?: boolean;
  };
  VariableVersion: {
    version: number;
    scope: { type: "environment" | "component"; id: Id };
    created_at: string;
    actor: { type: string; account_id: Id | null; api_key_id: Id | null };
    request_id: string;
    changes: PendingSchemas["VariableChange"][];
  };
  /** §19 */
  TimelineEntry: {
    seq: number;
    type: "status" | "log";
    created_at: string;
    stack_id: Id | null;
    status: Schemas["DeploymentStatus"] | null;
    status_reason: string | null;
    stream: "stdout" | "stderr" | null;
    message: string | null;
  };
  /** §20 adds `redeploy_of` to every deployment record. */
  Deployment: Schemas["Deployment"] & { redeploy_of?: Id | null };
  /** §21 */
  ApiKeyRecord: Omit<Schemas["ApiKey"], "scopes"> & {
    scopes: PendingSchemas["ApiKeyScope"][];
    parent_id: Id | null;
    revoked_at: string | null;
  };
  ApiKeyScope: Schemas["ApiKey"]["scopes"][number] | "api-keys:read" | "api-keys:write";
  ApiKeyCreate: {
    name?: string;
    scopes?: PendingSchemas["ApiKeyScope"][];
    project_ids?: Id[] | null;
    expires_at?: string | null;
  };
  /** The create answer alone carries the key. */
  ApiKeyCreated: PendingSchemas["ApiKeyRecord"] & { key: string };
};
type P = PendingSchemas;

type ScopeOperations<Param extends string> = {
  variables: Item<{
    parameters: NoParams;
    patch: {
      parameters: { query?: never; header?: never; path: { [K in Param]: Id }; cookie?: never };
      requestBody: { content: { "application/json": P["VariableChangeRequest"] } };
      responses: { 200: Json<P["VariableChangeResult"]> } & Errors;
    };
  }>;
  versions: Item<{
    parameters: NoParams;
    get: {
      parameters: { query?: ListQuery; header?: never; path: { [K in Param]: Id }; cookie?: never };
      requestBody?: never;
      responses: { 200: Json<Page<P["VariableVersion"]>> } & Errors;
    };
  }>;
  version: Item<{
    parameters: NoParams;
    get: {
      parameters: {
        query?: never;
        header?: never;
        path: { [K in Param]: Id } & { version: number };
        cookie?: never;
      };
      requestBody?: never;
      responses: { 200: Json<P["VariableVersion"]> } & Errors;
    };
  }>;
  restore: Item<{
    parameters: NoParams;
    post: {
      parameters: {
        query?: never;
        header?: never;
        path: { [K in Param]: Id } & { version: number };
        cookie?: never;
      };
      requestBody?: { content: { "application/json": { dry_run?: boolean } } };
      responses: { 200: Json<P["VariableChangeResult"]> } & Errors;
    };
  }>;
  export: Item<{
    parameters: NoParams;
    get: {
      parameters: { query?: never; header?: never; path: { [K in Param]: Id }; cookie?: never };
      requestBody?: never;
      responses: {
        200: { headers: { [name: string]: unknown }; content: { "text/plain": string } };
      } & Errors;
    };
  }>;
};
type Env = ScopeOperations<"environment_id">;
type Comp = ScopeOperations<"component_id">;
type IdPath = { query?: never; header?: never; path: { id: Id }; cookie?: never };

export type PendingPaths = {
  "/v1/environments/{environment_id}/variables": Env["variables"];
  "/v1/environments/{environment_id}/variables/versions": Env["versions"];
  "/v1/environments/{environment_id}/variables/versions/{version}": Env["version"];
  "/v1/environments/{environment_id}/variables/versions/{version}/restore": Env["restore"];
  "/v1/environments/{environment_id}/variables/export": Env["export"];
  "/v1/components/{component_id}/variables": Comp["variables"];
  "/v1/components/{component_id}/variables/versions": Comp["versions"];
  "/v1/components/{component_id}/variables/versions/{version}": Comp["version"];
  "/v1/components/{component_id}/variables/versions/{version}/restore": Comp["restore"];
  "/v1/components/{component_id}/variables/export": Comp["export"];
  "/v1/deployments/{id}/timeline": Item<{
    parameters: NoParams;
    get: {
      parameters: {
        query?: { after?: string; after_seq?: number; limit?: number };
        header?: { "Last-Event-ID"?: string };
        path: { id: Id };
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        200: {
          headers: { [name: string]: unknown };
          content: { "application/json": Page<P["TimelineEntry"]>; "text/event-stream": string };
        };
      } & Errors;
    };
  }>;
  "/v1/deployments/{id}/wait": Item<{
    parameters: NoParams;
    get: {
      parameters: Omit<IdPath, "query"> & { query?: { timeout?: number } };
      requestBody?: never;
      responses: { 200: Json<P["Deployment"]> } & Errors;
    };
  }>;
  "/v1/deployments/{id}/redeploy": Item<{
    parameters: NoParams;
    post: {
      parameters: IdPath;
      requestBody?: { content: { "application/json": Record<string, never> } };
      responses: { 201: Json<P["Deployment"]> } & Errors;
    };
  }>;
  "/v1/api-keys": Item<{
    parameters: NoParams;
    get: {
      parameters: { query?: ListQuery & { account_id?: Id }; header?: never; path?: never; cookie?: never };
      requestBody?: never;
      responses: { 200: Json<Page<P["ApiKeyRecord"]>> } & Errors;
    };
    post: {
      parameters: NoParams;
      requestBody?: { content: { "application/json": P["ApiKeyCreate"] } };
      responses: { 201: Json<P["ApiKeyCreated"]> } & Errors;
    };
  }>;
  "/v1/api-keys/{id}": Item<{
    parameters: NoParams;
    get: {
      parameters: IdPath;
      requestBody?: never;
      responses: { 200: Json<P["ApiKeyRecord"]> } & Errors;
    };
    delete: {
      parameters: IdPath;
      requestBody?: never;
      responses: { 204: { headers: { [name: string]: unknown }; content?: never } } & Errors;
    };
  }>;
};

/** The methods a path item really defines (`get?: never` is the generator's "no such method"). */
type Defined<Item> = {
  [M in keyof Item]-?: [Exclude<Item[M], undefined>] extends [never] ? never : M;
}[keyof Item];
/** A pending method fills a gap of the generated item; a method the generator defines wins. */
type MergeItem<Generated, Pending> = Omit<Generated, Exclude<Defined<Pending>, Defined<Generated>>> &
  Pick<Pending, Exclude<Defined<Pending>, Defined<Generated>>>;

/** Every path the client knows: the generated ones, and the pending ones where they have a gap. */
export type Paths = Omit<paths, keyof PendingPaths> & {
  [K in keyof PendingPaths]: K extends keyof paths ? MergeItem<paths[K], PendingPaths[K]> : PendingPaths[K];
};
