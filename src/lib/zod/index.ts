/**
 * What `import … from "zod"` resolves to in the Worker's bundle (wrangler.toml `[alias]`, and
 * vitest.config.ts for the tests): zod's own entry, less what this Worker never uses and the
 * bundle cannot shed by itself.
 *
 * @hono/zod-openapi hands zod's whole namespace object to zod-to-openapi, so the bundler keeps
 * every module the namespace names, used or not. Three of them are large: `locales` (every
 * language's error messages, 357 KiB of the 1.35 MiB bundle; English, the only one used, is
 * loaded by zod's schemas themselves), the opt-in schema compiler (`compile` and its kin,
 * 58 KiB) and `fromJSONSchema` (25 KiB). Without them the bundle is 255 → 197 KiB gzip, and a
 * new isolate compiles 0.45 MiB less JavaScript: 79 M of the 422 M instructions it took to
 * start (bench/README.md, "Startup"). The modules are zod's own files, so every schema class is
 * zod's; test/unit/zod-entry.test.ts checks that nothing else is left out.
 */
import * as z from "./classic";

export * from "./classic";
export { z, z as default };
