/** The event log's query and parameters (API_CONTRACT §13); the record itself is src/schemas/event.ts. */
import { once } from "../../lib/once";
import { listQuery } from "../../openapi/lists";
import { idParams, queryList } from "../../openapi/primitives";
import { EventTypeSchema } from "../../schemas/event";

/** The event log's query, built with the list (an event read builds none of it). */
export const eventListQuery = once(() =>
  listQuery().extend({
    type: queryList(
      EventTypeSchema,
      "Only events of these types: repeat the parameter (`type=deployment.failed&type=service.in_alarm`) or separate " +
        "values with commas; a value given twice counts once. A cursor is bound to the set of types.",
    ),
  }),
);

export const ProjectParams = idParams("project_id");
export const EventParams = idParams("event_id");
