import { z } from "@hono/zod-openapi";
import { envelope } from "../../openapi/lists";
import { idParams, nullAsAbsent } from "../../openapi/primitives";
import {
  ConfigurationInputSchema,
  CreatedIntegrationSchema,
  DeliverySchema,
  IntegrationSchema,
} from "../../schemas/integration";

export { CreatedIntegrationSchema, DeliverySchema, IntegrationSchema };

const url = z
  .string()
  .min(1)
  .max(2048)
  .openapi({
    format: "uri",
    example: "https://hooks.example.com/deploys",
    description:
      "Where deliveries are POSTed: `https://` to a public host name. `http://`, `localhost`, loopback, " +
      "private, link-local and IP-literal hosts, and URLs with credentials, are `400 bad_input`. Where " +
      "`ALLOW_INSECURE_WEBHOOKS=true` (local development: `npm run dev`), any http(s) URL is taken.",
  });

export const IntegrationListSchema = envelope(IntegrationSchema, "NotificationIntegrationList");

export const IntegrationCreateSchema = z
  .strictObject({
    type: z.literal("webhook").openapi({ description: "Only `webhook` can be created through this API." }),
    url,
    // A union, not `nullAsAbsent`: the input keeps its `$ref` in the document; null is read as {}.
    configuration: z
      .union([ConfigurationInputSchema, z.null()])
      .optional()
      .openapi({ description: "Flags left out (or the whole object, or `null`) are `false`." }),
  })
  .openapi("NotificationIntegrationCreate");

export const IntegrationUpdateSchema = z
  .strictObject({
    configuration: z.union([ConfigurationInputSchema, z.null()]).optional().openapi({
      description:
        "The given flags are merged into the stored configuration; the others keep their value (`null`: none given).",
    }),
    url: nullAsAbsent(url).openapi({
      description:
        "A new destination (`null`: unchanged); refused (`400 bad_input`) on a `slack` integration, whose URL is a credential.",
    }),
    enabled: nullAsAbsent(z.boolean()).openapi({
      description:
        "`false` disables (reason `manual`); on an integration already disabled, its `disabled_reason` and " +
        "`disabled_at` stay (a `gone` or `failing` one keeps what the service found, and when). `true` " +
        "re-enables and clears both. Neither sends anything to the integration.",
    }),
  })
  .openapi("NotificationIntegrationUpdate", {
    description: "At least one flag, `url` or `enabled`; nothing to change is `400 bad_input`.",
  });

export const DeliveryListSchema = envelope(DeliverySchema, "WebhookDeliveryList");

export const ProjectParams = idParams("project_id");
export const IntegrationParams = idParams("project_id", "integration_id");
export const DeliveryParams = idParams("project_id", "integration_id", "delivery_id");
