/** The published configuration schemas are the event-type table: one flag per type, described by it. */
import { expect, it } from "vitest";
import { EVENT_TYPES, FLAG_DESCRIPTION, NOTIFICATION_FLAGS } from "../../../src/db/event-types";
import { openApiDocument } from "../../helpers/openapi";

it("publishes NotificationConfiguration and its input with every flag of the table, in its order", async () => {
  const doc = await openApiDocument();
  for (const name of ["NotificationConfiguration", "NotificationConfigurationInput"]) {
    const schema = doc.components.schemas?.[name] as { properties: Record<string, { description?: string }> };
    expect(Object.keys(schema.properties)).toEqual([...NOTIFICATION_FLAGS]);
    for (const flag of NOTIFICATION_FLAGS)
      expect(schema.properties[flag]?.description).toBe(FLAG_DESCRIPTION[flag]);
  }
  // One flag per type of API_CONTRACT §8; §31's six gate events share the eighth.
  expect(NOTIFICATION_FLAGS).toHaveLength(EVENT_TYPES.length - 5);
});
