/** The delivery routes' page and parameters (an integration's, an event's); apart from ./schema.ts, which every integration operation builds. */
import { once } from "../../lib/once";
import { envelope } from "../../openapi/lists";
import { idParams } from "../../openapi/primitives";
import { DeliverySchema } from "../../schemas/delivery";

export { DeliverySchema };

/** Built by the list operations only: a read of one record builds no envelope. */
export const deliveryListSchema = once(() => envelope(DeliverySchema, "WebhookDeliveryList"));

export const DeliveryParams = idParams("project_id", "integration_id", "delivery_id");
