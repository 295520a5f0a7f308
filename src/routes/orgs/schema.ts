import { z } from "@hono/zod-openapi";
import { envelope } from "../../http/openapi";
import { text } from "../../http/text";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");

export const OrganizationCreateSchema = z
  .strictObject({ name: text(1, 100).openapi({ example: "Acme" }) })
  .openapi("OrganizationCreate");
