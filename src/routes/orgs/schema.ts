import { z } from "@hono/zod-openapi";
import { envelope } from "../../http/openapi";
import { OrganizationSchema } from "../../schemas/organization";

export { OrganizationSchema };

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");

export const OrganizationCreateSchema = z
  .strictObject({ name: z.string().min(1).max(100).openapi({ example: "Acme" }) })
  .openapi("OrganizationCreate");
