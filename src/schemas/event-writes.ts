/** The internal API's event create (API_CONTRACT §9, §13). */
import * as z from "zod";
import { INTERNAL_EVENT_TYPES } from "../db/event-types";
import { nullAsAbsent } from "../openapi/primitives";

export const EventCreateBody = z.strictObject({
  type: z.enum(INTERNAL_EVENT_TYPES),
  // Left out or `null`: no data beyond the `project_id` the service adds.
  data: nullAsAbsent(z.record(z.string(), z.unknown())).transform((data) => data ?? {}),
});

export type EventCreateInput = z.infer<typeof EventCreateBody>;
