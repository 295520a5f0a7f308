import { applyD1Migrations, env } from "cloudflare:test";

// Idempotent: applyD1Migrations records what it applied.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
