import { z } from "@hono/zod-openapi";
import { envelope, IdSchema, TimestampSchema } from "../../http/openapi";
import { text } from "../../http/text";

export const OrganizationSchema = z
  .object({ id: IdSchema, name: z.string(), created_at: TimestampSchema })
  .openapi("Organization");

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");

export const OrganizationCreateSchema = z
  .strictObject({ name: text(1, 100).openapi({ example: "Acme" }) })
  .openapi("OrganizationCreate");
