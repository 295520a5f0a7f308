/**
 * Writes the public OpenAPI document, as the Worker serves it at `GET /openapi.json`, to the
 * file named by the first argument (default `dist/openapi.json`). Built in Node from the same
 * `createApp()`; the origin is a placeholder https one, as a deployed Worker would publish.
 * Run with tsx: `npx tsx scripts/openapi-json.ts [out]`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createApp } from "../src/app";

const out = resolve(process.argv[2] ?? "dist/openapi.json");
// No bindings: the document reads none. Every request still builds its service context
// (src/middleware/context.ts) from `env`, which opens nothing, so an empty one will do.
const noBindings = {} as Env;
const res = await createApp().request("https://deploy-platform-api.test/openapi.json", {}, noBindings);
if (res.status !== 200) throw new Error(`GET /openapi.json → ${res.status}`);
const doc = await res.json();
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
