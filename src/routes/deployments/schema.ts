/**
 * The deployment routes' lists, queries and parameters; the record itself is src/schemas/deployment.ts.
 * A query of one operation alone is its route's (the timeline's, the wait's): this module is built
 * with every deployment operation.
 */

import { once } from "../../lib/once";
import { envelope, listQuery } from "../../openapi/lists";
import { idParams, queryList } from "../../openapi/primitives";
import { DeploymentSchema, DeploymentStatusSchema } from "../../schemas/deployment";

export { DeploymentSchema, DeploymentStatusSchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const deploymentListSchema = once(() => envelope(DeploymentSchema, "DeploymentList"));

/** The lists' `status` filter, built with the first list (a deployment read builds none). */
export const statusFilter = once(() =>
  queryList(
    DeploymentStatusSchema,
    "Only deployments in these statuses: repeat the parameter (`status=failed&status=cancelled`) or " +
      "separate values with commas (`status=failed,cancelled`); a value given twice counts once. A cursor is bound to the set of statuses.",
  ),
);

export const deploymentListQuery = once(() => listQuery().extend({ status: statusFilter() }));

export const DeploymentParams = idParams("id");
export const EnvironmentDeploymentParams = idParams("environment_id", "id");
export const StackParams = idParams("stack_id");
export const EnvironmentParams = idParams("environment_id");
