import type { OpenAPIHono } from "@hono/zod-openapi";
import * as z from "zod";
import type { AppEnv } from "../../http/app-env";
import { ID_PATTERN } from "../../lib/ids";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { ConfigDiffSchema } from "../../schemas/config";
import { getDeploymentConfigDiff } from "../../services/deployments/config-diff";
import { DeploymentParams } from "./schema";

const AGAINST = new RegExp(`^(?:current|${ID_PATTERN.source.slice(1, -1)})$`);

const DiffQuerySchema = z.object({
  // A well-formed ID that is not a deployment of this environment with a configuration is the
  // service's `400`; anything else the validator's (both with cause `against`).
  against: z
    .string()
    .max(36)
    .regex(AGAINST, "Must be `current` or a deployment ID.")
    .default("current")
    .openapi({
      param: { name: "against", in: "query" },
      description:
        "`current` (each scope as it is now) or the ID of another deployment of the same environment with a " +
        "configuration.",
      example: "current",
    }),
});

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments/{id}/config/diff",
    operationId: "getDeploymentConfigDiff",
    tags: ["Deployments"],
    summary: "What changed in the configuration since a deployment (or between two)",
    description:
      "The changes from this deployment's configuration to `against`, by scope (the environment first, then " +
      "components by ID) and name; a name whose type and value are the same on both sides is left out. For a " +
      "`secret` or `secure_string`, `value_changed` says only whether a value was written between the two versions: " +
      "a diff never tells whether two secret values are equal. Project role `viewer` or above.",
    request: { params: DeploymentParams, query: DiffQuerySchema },
    responses: { 200: jsonContent(ConfigDiffSchema, "The changes.") },
  });
  app.openapi(route, async (c) => {
    const { id } = c.req.valid("param");
    const { against } = c.req.valid("query");
    return c.json(await getDeploymentConfigDiff(callerContext(c), id, against), 200);
  });
}
