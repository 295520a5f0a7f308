// check:deploy's walk of the staging build served locally (scripts/check-deploy.mjs, after the
// build and `wrangler deploy --dry-run`): `npm run dev -- --env staging` starts it (its build,
// local D1 migrated and seeded); every operation answers below 500, first requests concurrently;
// its /openapi.json and MCP tools/list are the source's, read from its assets; its modules hold
// none of the document's prose; both crons run and an event reaches a webhook, signed.
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "@babel/parser";
import { Webhook } from "standardwebhooks";
import { stripDocumentText } from "./build-document.mjs";
import { runCronsByHand, startDevServer, until } from "./dev-server.mjs";
import { DOCUMENT_ASSET_PATH, TOOL_LIST_ASSET_PATH } from "./docs-assets.mjs";
import { sameJson } from "./lib/check.mjs";
import { sourceDocument } from "./lib/source-document.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * What the staging build runs outside a request, each loaded on first use: both crons, by
 * wrangler's own path (a build wrangler does not bundle gets no `/__scheduled`); and the queue
 * consumer and a delivery lane, by an event of the demo project reaching a webhook receiver here,
 * signed.
 */
async function cronsAndWebhooks({ check, base, key, admin, project, log }) {
  const printed = /By hand: curl '([^']+)\?cron=/.exec(log())?.[1];
  check(
    printed === `${base}/cdn-cgi/handler/scheduled`,
    "npm run dev -- --env staging prints wrangler's cron path",
    printed,
  );
  await until(() => log().includes("ran at the start"));
  check(
    log().includes('The sweep (cron "*/5 * * * *") ran at the start: 200'),
    "npm run dev -- --env staging runs the sweep as it starts, by that path",
    "no such line in its output",
  );
  const crons = await runCronsByHand(base, "/cdn-cgi/handler/scheduled", log);
  for (const { cron, status, text } of crons.answers)
    check(status === 200, `the staging build runs the cron job "${cron}"`, `${status} ${text}`);
  check(crons.dailyRan, "the daily job ran in the Worker", "no retention log line");
  const received = [];
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const created = await fetch(`${base}/v1/projects/${project}/notification-integrations`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        type: "webhook",
        url: `http://127.0.0.1:${receiver.address().port}/hook`,
        configuration: { changelog: true },
      }),
    });
    const integration = await created.json();
    const event = await fetch(`${base}/internal/v1/projects/${project}/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "changelog.created", data: { check: "deploy" } }),
    });
    const { id } = await event.json();
    for (let i = 0; i < 100 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    const [delivery] = received;
    let verified = false;
    try {
      new Webhook(integration.signing_secret).verify(delivery.body, delivery.headers);
      verified = true;
    } catch {}
    check(
      created.status === 201 && event.status === 202 && delivery?.headers["webhook-id"] === id && verified,
      "the staging build's queue consumer and delivery lane deliver an event to a webhook, signed",
      `integration ${created.status}, event ${event.status} ${id}, ${received.length} received (webhook-id ${delivery?.headers["webhook-id"]}, signature ${verified ? "" : "not "}verified)`,
    );
  } finally {
    receiver.close();
  }
}

/**
 * scripts/build-document.mjs: what it blanks (the document's prose where routes and schemas declare
 * it) and what it keeps (a field named `description`, a value, a call's argument), on a module made
 * for it; then in the build `dir` of `document` (the source's): no operation's summary or
 * description, and no response's, is in its modules, but for the MCP server's own words (its tools
 * are named like some operations), which it keeps; nor are the MCP tools' descriptions of `tools`
 * (the source's tools/list), which the build answers from its assets.
 */
function documentProseLeftOut(check, document, tools, dir) {
  const module = `const ProjectSchema = z.object({ name: z.string(), description: z.string().nullable() })
  .openapi("Project", { description: "PROSE-1", example: { name: "PROSE-2" } });
const route = defineRoute({ method: "get", path: "/x", summary: "PROSE-3", description: "PROSE-4",
  request: { body: jsonBody(z.object({ description: z.string().default("KEPT-1") }), "PROSE-5") },
  responses: { 200: { ...jsonContent(ProjectSchema, "PROSE-6"), headers: H }, 404: { description: "PROSE-7" } } });
export const declared = { method: "patch", tags: ["T"], summary: "PROSE-8", responses: { 200: {
  content: { "text/plain": { schema: z.string().openapi("Dotenv", { description: "PROSE-9" }) } } } } };
const project = { name: "KEPT-2", description: "KEPT-3", summary: "KEPT-4" };
send({ description: "KEPT-5" }, z.string().describe("KEPT-6"));\n`;
  const { text, blanked } = stripDocumentText(module, "fixture.ts");
  const lines = (t) => t.split("\n").length;
  check(
    blanked === 9 &&
      !/PROSE-/.test(text) &&
      ["KEPT-1", "KEPT-2", "KEPT-3", "KEPT-4", "KEPT-5", "KEPT-6"].every((kept) => text.includes(kept)) &&
      text.length === module.length &&
      lines(text) === lines(module) &&
      text.indexOf("KEPT-3") === module.indexOf("KEPT-3"),
    "scripts/build-document.mjs blanks the document's prose where routes and schemas declare it, keeps fields, values and arguments, and moves no other character",
    text,
  );
  const toolModule = `export const T = [tool({ name: "KEPT-1", title: "PROSE-1", description: "PROSE-2",
  input: z.strictObject({ id: z.string().regex(/x/, "KEPT-2").describe("PROSE-3"),
    n: z.number().describe(\`PROSE-4 \${x}\`).optional() }), annotations: READ })];\n`;
  const tool = stripDocumentText(toolModule, "tool.ts", { tools: true });
  let parses = true;
  try {
    parse(tool.text, { sourceType: "module" });
  } catch {
    parses = false;
  }
  check(
    tool.blanked === 4 &&
      !/PROSE-/.test(tool.text) &&
      ["KEPT-1", "KEPT-2", ".optional()"].every((kept) => tool.text.includes(kept)) &&
      tool.text.length === toolModule.length &&
      parses,
    "in an MCP tool's module, it also blanks the tool's title and description and its arguments' .describe(…), and the module still parses",
    tool.text,
  );
  const mcp = readdirSync(join(root, "src", "mcp"), { recursive: true })
    .filter((name) => String(name).endsWith(".ts"))
    .map((name) => readFileSync(join(root, "src", "mcp", String(name)), "utf8"))
    .join("\n");
  const prose = new Set();
  for (const operations of Object.values(document.paths))
    for (const operation of Object.values(operations)) {
      for (const text of [operation.summary, operation.description]) prose.add(text);
      for (const response of Object.values(operation.responses ?? {})) prose.add(response.description);
    }
  const modules = readdirSync(dir)
    .filter((name) => name.endsWith(".js"))
    .map((name) => readFileSync(join(dir, name), "utf8"))
    .join("\n");
  // Its first 40 characters, as a string literal holds them (no escape among them).
  const heads = [...prose].filter((t) => typeof t === "string" && t.length >= 12).map((t) => t.slice(0, 40));
  const shipped = heads.filter(
    (head) => !/[\\"'`\n]/.test(head) && modules.includes(head) && !mcp.includes(head),
  );
  check(
    heads.length > 200 && shipped.length === 0,
    `the staging build's modules hold none of the document's ${heads.length} operation and response texts (but the MCP server's own)`,
    shipped.join(" | "),
  );
  // The tools' words, which its tools/list answers from the assets: each tool's description and
  // its arguments' descriptions.
  const toolHeads = [
    ...new Set(
      tools.tools.flatMap((t) => [
        t.description,
        ...Object.values(t.inputSchema?.properties ?? {}).map((p) => p.description),
      ]),
    ),
  ]
    .filter((t) => typeof t === "string" && t.length >= 12)
    .map((t) => t.slice(0, 40))
    .filter((head) => !/[\\"'`\n$]/.test(head));
  const toolShipped = toolHeads.filter((head) => modules.includes(head));
  check(
    toolHeads.length > 15 && toolShipped.length === 0,
    `the staging build's modules hold none of the MCP tools' ${toolHeads.length} descriptions (its tools/list is an asset)`,
    toolShipped.join(" | "),
  );
}

/**
 * The staging build served locally (scripts/dev.mjs `--env staging`: its build, local D1 migrated
 * and seeded, .dev.vars's secrets): its /openapi.json is the source's, and one request to each
 * operation of src/routes/index.ts answers below 500 (a chunk that fails to load or link is a 500).
 */
export async function walkServedBuild(tmp, { check, fail }) {
  const dir = join(tmp, "served");
  let server;
  try {
    // Limits raised (src/config.ts RATE_LIMITS): the bursts below are one key's hundreds of
    // requests.
    const limits = Object.fromEntries(
      ["default", "reveal", "orgs-create", "keys-create", "anonymous", "oidc-exchange"].map((p) => [
        p,
        1_000_000,
      ]),
    );
    server = await startDevServer(dir, {
      args: ["--env", "staging", "--var", `RATE_LIMITS:${JSON.stringify(limits)}`],
    });
    const { base } = server;
    const key = readFileSync(server.keyFile, "utf8").trim();
    const admin = /^ADMIN_TOKEN=(.*)$/m.exec(readFileSync(join(root, ".dev.vars"), "utf8"))?.[1];
    check(
      /\[custom build\] Running: node scripts\/build\.mjs dist\/staging/.test(server.log()),
      "npm run dev -- --env staging serves scripts/build.mjs's staging build",
      server.log(),
    );
    const projects = await (await fetch(`${base}/v1/projects`, { headers: { "x-api-key": key } })).json();
    const demo = projects.data?.[0] ?? {};
    const ids = { project_id: demo.id, environment_id: demo.default_environment_id };
    const unknown = "1111111111111111111111";
    // Every operation, the internal ones (absent from the public document) too.
    const index = readFileSync(join(root, "src", "routes", "index.ts"), "utf8");
    const operations = [...index.matchAll(/op\("(\w+)", "([^"]+)"/g)].map(([, method, path]) => ({
      method,
      path,
    }));
    operations.push({ method: "post", path: "/mcp" });
    const send = async ({ method, path }) => {
      const url = base + path.replace(/\{(\w+)\}/g, (_, name) => ids[name] ?? unknown);
      const headers = path.startsWith("/internal/")
        ? { authorization: `Bearer ${admin}` }
        : path === "/mcp"
          ? { authorization: `Bearer ${key}`, accept: "application/json, text/event-stream" }
          : { "x-api-key": key };
      const write = method !== "get" && method !== "delete";
      if (write) headers["content-type"] = "application/json";
      const body =
        path === "/mcp"
          ? JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          : write
            ? "{}"
            : undefined;
      const res = await fetch(url, {
        method: method.toUpperCase(),
        headers,
        body,
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      return { status: res.status, text };
    };

    // A new isolate's first requests to an operation, several at once, before anything has loaded
    // it: its chunk's import stays pending across requests, and a request that awaited another
    // request's pending load ran on in that request's I/O context, where its own I/O failed
    // ("Cannot perform I/O on behalf of a different request", src/lib/once.ts `loadedOnce`).
    const reads = operations.filter((o) => o.method === "get" && !/\/(stream|wait)$/.test(o.path));
    const concurrent = [];
    for (const operation of reads) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => send(operation)));
      const failed = answers.filter((a) => a.status >= 500);
      if (failed.length > 0)
        concurrent.push(
          `GET ${operation.path}: ${failed.length} × ${failed[0].status} ${failed[0].text.slice(0, 200)}`,
        );
    }
    const [documents, mcp] = await Promise.all([
      Promise.all(Array.from({ length: 4 }, () => fetch(`${base}/openapi.json`).then((r) => r.status))),
      Promise.all(
        Array.from({ length: 4 }, () => send({ method: "post", path: "/mcp" }).then((r) => r.status)),
      ),
    ]);
    check(
      reads.length > 0 &&
        concurrent.length === 0 &&
        documents.every((s) => s === 200) &&
        mcp.every((s) => s === 200),
      `the staging build answers 8 concurrent first requests to each of its ${reads.length} reads, and 4 to /openapi.json and /mcp, below 500`,
      `${concurrent.join("; ")} /openapi.json ${documents} /mcp ${mcp}`,
    );

    const served = await (await fetch(`${base}/openapi.json`)).json();
    const { document: source, tools: sourceTools } = sourceDocument();
    const expected = JSON.parse(readFileSync(source, "utf8"));
    const withoutServers = ({ servers, ...doc }) => doc;
    check(
      sameJson(withoutServers(served), withoutServers(expected)) && served.servers?.[0]?.url === base,
      `the staging build serves the source's /openapi.json (${Object.keys(expected.paths).length} paths), its server the origin that serves it`,
      `they differ (server ${served.servers?.[0]?.url}): compare GET /openapi.json with \`npx tsx scripts/openapi-json.ts\``,
    );
    const servedTools = JSON.parse((await send({ method: "post", path: "/mcp" })).text);
    const expectedTools = JSON.parse(readFileSync(sourceTools, "utf8"));
    check(
      sameJson(servedTools.result, expectedTools) && expectedTools.tools.length > 10,
      `the staging build's MCP tools/list is the source's (${expectedTools.tools.length} tools), read from its assets`,
      `they differ: compare tools/list with \`npx tsx scripts/openapi-json.ts /dev/null <tools-out>\`\n${JSON.stringify(servedTools).slice(0, 400)}`,
    );
    // Every tool called once with no arguments: each answers as a tool (its result, or its refusal
    // of the arguments as zod words it), never as a fault; none reaches the JSON Schema conversion
    // the build stands in for. `list_projects` needs none and answers the seeded project.
    const calls = [];
    for (const { name } of expectedTools.tools) {
      const res = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name, arguments: {} },
        }),
      });
      const answer = await res.json().catch(() => ({}));
      const text = answer.result?.content?.[0]?.text ?? "";
      calls.push({ name, status: res.status, answer, text });
    }
    const faulty = calls.filter((c) => c.status !== 200 || !c.answer.result || /Internal error/.test(c.text));
    const listed = calls.find((c) => c.name === "list_projects");
    check(
      faulty.length === 0 &&
        listed?.answer.result?.isError === undefined &&
        listed?.answer.result?.structuredContent?.data?.some((p) => p.id === demo.id),
      `the staging build's ${calls.length} MCP tools each answer a call as a tool, list_projects with the seeded project`,
      faulty.map((c) => `${c.name}: ${c.status} ${c.text.slice(0, 160)}`).join("; ") ||
        JSON.stringify(listed?.answer).slice(0, 300),
    );
    for (const path of [DOCUMENT_ASSET_PATH, TOOL_LIST_ASSET_PATH]) {
      const asset = await fetch(`${base}${path}`);
      check(
        asset.status === 404,
        `the build's own file among the assets is reached by no path (${path}: ${asset.status})`,
      );
    }
    documentProseLeftOut(check, expected, expectedTools, join(root, "dist", "staging"));
    await cronsAndWebhooks({ check, base, key, admin, project: demo.id, log: server.log });
    // Deletions last, so that the seeded project lasts the walk.
    operations.sort((a, b) => (a.method === "delete") - (b.method === "delete"));
    const [failures, statuses] = [[], {}];
    for (const operation of operations) {
      const { status } = await send(operation);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status >= 500) failures.push(`${operation.method.toUpperCase()} ${operation.path}: ${status}`);
    }
    // The walk's list (read from src/routes/index.ts) holds every operation the document publishes.
    const walked = new Set(operations.map(({ method, path }) => `${method} ${path}`));
    const unwalked = Object.entries(expected.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ["get", "put", "post", "patch", "delete"].includes(method))
        .map((method) => `${method} ${path}`)
        .filter((op) => !walked.has(op)),
    );
    check(
      failures.length === 0 && unwalked.length === 0,
      `the staging build answers one request to each of its ${operations.length} operations below 500 (${Object.entries(
        statuses,
      )
        .map(([status, n]) => `${n} × ${status}`)
        .join(", ")}), every operation of its document among them`,
      `${failures.join("; ")}${unwalked.length ? ` not walked: ${unwalked.join(", ")}` : ""}`,
    );
  } catch (err) {
    fail(err);
  } finally {
    server?.stop();
    // Its processes let go of their state before the directory goes (as check:dev waits).
    await new Promise((r) => setTimeout(r, 500));
  }
}
