import { z } from "@hono/zod-openapi";
import { envelope } from "../../openapi/lists";
import { text } from "../../openapi/primitives";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");

export const OrganizationCreateSchema = z
  .strictObject({ name: text(1, 100).openapi({ example: "Acme" }) })
  .openapi("OrganizationCreate");
