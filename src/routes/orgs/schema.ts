import { z } from "@hono/zod-openapi";
import { envelope, IdSchema, TimestampSchema } from "../../http/openapi";

export const OrganizationSchema = z
  .object({ id: IdSchema, name: z.string(), created_at: TimestampSchema })
  .openapi("Organization");

export const OrganizationListSchema = envelope(OrganizationSchema, "OrganizationList");

export const OrganizationCreateSchema = z
  .strictObject({ name: z.string().min(1).max(100).openapi({ example: "Acme" }) })
  .openapi("OrganizationCreate");
