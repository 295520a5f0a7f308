import { defineConfig } from "drizzle-kit";

// drizzle-kit writes SQL migrations into migrations/, which wrangler applies
// (`migrations_dir` in wrangler.toml) and the tests read (vitest.config.ts).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});
