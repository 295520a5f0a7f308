/**
 * In the Worker's bundle in place of `ajv` (wrangler.toml [alias]). The MCP SDK's server builds an
 * Ajv validator only when it is given none, to check a client's answers to elicitation; this
 * server gives its own (src/mcp/server.ts: it never elicits). Ajv could not run on Workers anyway
 * (it compiles schemas with `new Function`), and leaving it and its formats out keeps ~130 KiB of
 * JavaScript out of every new isolate's compile (bench/README.md, "Startup"). The tests run the
 * real package: the SDK's client, which the tests drive, validates answers with it.
 */
export default class Ajv {
  constructor() {
    throw new Error("ajv is left out of the Worker's bundle (src/mcp/left-out/ajv.ts)");
  }
}
