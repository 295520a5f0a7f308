/** The deployment routes' lists, queries and parameters; the record itself is src/schemas/deployment.ts. */
import { z } from "@hono/zod-openapi";
import { envelope, idParams, ListQuerySchema } from "../../http/openapi";
import { DeploymentSchema, DeploymentStatusSchema } from "../../schemas/deployment";

export { DeploymentSchema, DeploymentStatusSchema };

export const DeploymentListSchema = envelope(DeploymentSchema, "DeploymentList");

/** A single query value arrives as a string, a repeated one as an array; both may hold commas. */
const StatusFilterSchema = z
  .preprocess(
    (value) =>
      value === undefined
        ? undefined
        : (Array.isArray(value) ? value : [value]).flatMap((v) => String(v).split(",")),
    // No cap: the values are deduplicated (a set of at most the enum's size) before any use.
    z.array(DeploymentStatusSchema).optional(),
  )
  .openapi({
    param: { style: "form", explode: true },
    description:
      "Only deployments in these statuses: repeat the parameter (`status=failed&status=cancelled`) or " +
      "separate values with commas (`status=failed,cancelled`); a value given twice counts once. A cursor is bound to the set of statuses.",
  });

export const DeploymentListQuerySchema = ListQuerySchema.extend({ status: StatusFilterSchema });

export const DeploymentParams = idParams("id");
export const EnvironmentDeploymentParams = idParams("environment_id", "id");
export const StackParams = idParams("stack_id");
export const EnvironmentParams = idParams("environment_id");
