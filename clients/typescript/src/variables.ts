/**
 * A scope's variables as one set (API_CONTRACT §18): export as a dotenv file, apply a change (or
 * preview it with `dry_run`), restore an earlier version. A scope is an environment's own
 * variables or one component's.
 */
import type { DeployClient } from "./client.js";
import { unwrap, unwrapData } from "./errors.js";
import type { VariableChangeRequest, VariableChangeResult } from "./types.js";

export type VariableScope = { environment: string } | { component: string };

/** The scope as a dotenv file (`NAME="value"` lines, sorted by name). A reveal: it is audited. */
export async function exportVariables(
  client: DeployClient,
  scope: VariableScope,
  init: { signal?: AbortSignal } = {},
): Promise<string> {
  const result =
    "environment" in scope
      ? await client.GET("/v1/environments/{environment_id}/variables/export", {
          params: { path: { environment_id: scope.environment } },
          parseAs: "text",
          ...init,
        })
      : await client.GET("/v1/components/{component_id}/variables/export", {
          params: { path: { component_id: scope.component } },
          parseAs: "text",
          ...init,
        });
  // An empty scope exports an empty body, which a `Content-Length: 0` answer brings as undefined.
  return unwrap(result) ?? "";
}

/** `PATCH {scope}/variables`: one atomic change of many names, or its preview (`dry_run`). */
export async function applyVariableChanges(
  client: DeployClient,
  scope: VariableScope,
  body: VariableChangeRequest,
  init: { signal?: AbortSignal } = {},
): Promise<VariableChangeResult> {
  const result =
    "environment" in scope
      ? await client.PATCH("/v1/environments/{environment_id}/variables", {
          params: { path: { environment_id: scope.environment } },
          body,
          ...init,
        })
      : await client.PATCH("/v1/components/{component_id}/variables", {
          params: { path: { component_id: scope.component } },
          body,
          ...init,
        });
  return unwrapData(result) as VariableChangeResult;
}

/**
 * `POST {scope}/variables/versions/{version}/restore`: the scope's variables become what they were
 * right after `version`, as a new version; with `dryRun`, what that would change, changing nothing.
 */
export async function restoreVariableVersion(
  client: DeployClient,
  scope: VariableScope,
  version: number,
  init: { dryRun?: boolean; signal?: AbortSignal } = {},
): Promise<VariableChangeResult> {
  const body = { dry_run: init.dryRun === true };
  const result =
    "environment" in scope
      ? await client.POST("/v1/environments/{environment_id}/variables/versions/{version}/restore", {
          params: { path: { environment_id: scope.environment, version } },
          body,
          signal: init.signal,
        })
      : await client.POST("/v1/components/{component_id}/variables/versions/{version}/restore", {
          params: { path: { component_id: scope.component, version } },
          body,
          signal: init.signal,
        });
  return unwrapData(result) as VariableChangeResult;
}
