/** The deployment routes' lists, queries and parameters; the record itself is src/schemas/deployment.ts. */

import { z } from "@hono/zod-openapi";
import { envelope, ListQuerySchema, pageLimit, wholeNumber } from "../../openapi/lists";
import { idParams, queryList } from "../../openapi/primitives";
import { DeploymentSchema, DeploymentStatusSchema } from "../../schemas/deployment";
import { TimelineEntrySchema } from "../../schemas/timeline";

export { DeploymentSchema, DeploymentStatusSchema };

export const DeploymentListSchema = envelope(DeploymentSchema, "DeploymentList");

export const StatusFilterSchema = queryList(
  DeploymentStatusSchema,
  "Only deployments in these statuses: repeat the parameter (`status=failed&status=cancelled`) or " +
    "separate values with commas (`status=failed,cancelled`); a value given twice counts once. A cursor is bound to the set of statuses.",
);

export const DeploymentListQuerySchema = ListQuerySchema.extend({ status: StatusFilterSchema });

export const DeploymentParams = idParams("id");
export const EnvironmentDeploymentParams = idParams("environment_id", "id");
export const StackParams = idParams("stack_id");
export const EnvironmentParams = idParams("environment_id");

/** A timeline page (API_CONTRACT §19): `seq` order only, so no `sort_by`; pages of 1–1000. */
export const TIMELINE_MAX_LIMIT = 1000;
export const TIMELINE_DEFAULT_LIMIT = 100;

export const DeploymentTimelineSchema = envelope(TimelineEntrySchema, "DeploymentTimelinePage");

export const TimelineQuerySchema = z.object({
  after: ListQuerySchema.shape.after,
  after_seq: wholeNumber(0, Number.MAX_SAFE_INTEGER).openapi({
    param: { name: "after_seq", in: "query" },
    description: "Start after this `seq` (not with `after`).",
    example: 0,
  }),
  limit: pageLimit(TIMELINE_MAX_LIMIT, TIMELINE_DEFAULT_LIMIT).openapi({
    param: { name: "limit", in: "query" },
    description: `Page size, 1–${TIMELINE_MAX_LIMIT}.`,
    example: TIMELINE_DEFAULT_LIMIT,
  }),
});

export const WAIT_MAX_SECONDS = 60;
export const WAIT_DEFAULT_SECONDS = 30;

export const WaitQuerySchema = z.object({
  // Seconds, as a decimal number (`timeout=2.5` too): nothing asks for whole seconds.
  timeout: z
    .preprocess(
      (value) => (typeof value === "string" && !/^[0-9]+(\.[0-9]+)?$/.test(value) ? Number.NaN : value),
      z.coerce.number().min(1).max(WAIT_MAX_SECONDS).default(WAIT_DEFAULT_SECONDS),
    )
    .openapi({
      param: { name: "timeout", in: "query" },
      description: `Seconds, 1–${WAIT_MAX_SECONDS}.`,
      type: "number",
      minimum: 1,
      maximum: WAIT_MAX_SECONDS,
      default: WAIT_DEFAULT_SECONDS,
      example: WAIT_DEFAULT_SECONDS,
    }),
});
