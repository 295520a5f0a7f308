/** The timestamp columns most tables share (RFC 3339 UTC with milliseconds: src/db/schema.ts). */
import { text } from "drizzle-orm/sqlite-core";

export const createdAt = () => text("created_at").notNull();
export const updatedAt = () => text("updated_at").notNull();
