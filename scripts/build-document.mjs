// The OpenAPI document in the deployed build (scripts/build.mjs): generated at build time, from the
// source as `npm run dev` serves it (scripts/openapi-json.ts), and written among the assets, where
// the Worker's `/openapi.json` reads it (src/openapi/document-asset.ts). So the modules it uploads
// need neither what generates a document nor the document's prose, and leave both out (issue #80's
// bundle: every new isolate compiles every module of the upload, prose and generator too):
//   - `documentGeneratorPlugin`: @hono/zod-openapi's import of zod-to-openapi takes the registry,
//     which routes are registered on (src/http/route-meta.ts reads their declarations there), but
//     not the generators (the bulk of the package), which only `getOpenAPIDocument` and
//     `getOpenAPI31Document` call and no code of the deployed build calls: there they are a class
//     that says so if made. Nor does `.openapi(…)` record metadata there, which only a generator
//     reads: it answers the schema it is called on, as it is (zod-to-openapi's makes a copy of the
//     schema for each call, the same schema for validation, 429 calls as modules are evaluated).
//     And @hono/zod-openapi's own entry hands the extension zod's `ZodType` alone, not zod's whole
//     namespace object: an object made of every export keeps every schema kind in the build, while
//     `src/` imports zod as a namespace (`import * as z from "zod"`, biome.json holds it), which
//     lets esbuild keep only the kinds used (zod's raw bytes 137.7 → 102.5 KB);
//   - `documentTextPlugin`: the prose blanked where it is written, as below;
//   - `jsonSchemaStubPlugin`: zod's JSON Schema conversion, which only the MCP server's
//     `tools/list` calls, stood in for: that list is generated at build time too, and written
//     among the assets beside the document (src/mcp/tool-list.ts).
//
// Routes and schemas carry the document's prose where they are declared: an operation's `summary`
// and `description`, a response's description, a schema's `.openapi({ description, example })`.
//
// `stripDocumentText` blanks that prose in one TypeScript module, by where it is written, never by
// what a value is named alone (`description` is also a project's field):
//   - in the object literal arguments of a `.openapi(…)` call (zod-to-openapi's metadata), the
//     properties `description`, `summary`, `example` and `examples`;
//   - in the first argument of `defineRoute(…)`, `defineInternalRoute(…)` and `createRoute(…)`,
//     and in an object literal with `method` and `tags` (an operation declared apart from that
//     call), the same properties of every object literal reached through object and array literals
//     and spreads (not through a call, a function or anything else: a body schema's
//     `z.object({ description: … })` is a field), and the description argument of `jsonContent`,
//     `jsonBody` and `optionalJsonBody` called there;
//   - in an MCP tool's module (`{ tools: true }`, src/mcp/tools/), whose words only `tools/list`
//     reads, also the `title` and `description` of the object a `tool(…)` call is given, and every
//     `.describe(…)` call, from its dot to its closing parenthesis (the schema it was called on
//     validates the same).
// A blanked property or argument is replaced by spaces (its newlines kept), its comma with it, so
// every other character keeps its line and column and the source maps stay true.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "@babel/parser";
import { DOCS_ASSETS_DIR, DOCUMENT_ASSET_PATH, TOOL_LIST_ASSET_PATH } from "./docs-assets.mjs";
import { sourceDocument } from "./lib/source-document.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

const PROSE = new Set(["description", "summary", "example", "examples"]);
const ROUTE_CALLS = new Set(["defineRoute", "defineInternalRoute", "createRoute"]);
const DESCRIBED_CALLS = new Set(["jsonContent", "jsonBody", "optionalJsonBody"]);
/** What only `tools/list` reads of an MCP tool (src/mcp/tools/define.ts), which the build answers from its assets. */
const TOOL_PROSE = new Set(["title", "description"]);

const calleeName = (call) =>
  call.callee.type === "Identifier"
    ? call.callee.name
    : call.callee.type === "MemberExpression" && !call.callee.computed
      ? call.callee.property.name
      : undefined;

const propertyName = (p) =>
  p.type === "ObjectProperty" &&
  !p.computed &&
  (p.key.type === "Identifier" || p.key.type === "StringLiteral")
    ? (p.key.name ?? p.key.value)
    : undefined;

/** An operation declared apart from its `defineRoute` call: an object literal with `method` and `tags`. */
const isRouteConfig = (node) => {
  const names = new Set(node.properties.map(propertyName));
  return names.has("method") && names.has("tags");
};

/** Each `[start, end)` of `source` to blank, found in the module's syntax tree. */
function proseRanges(source, path, { tools = false } = {}) {
  const ast = parse(source, { sourceType: "module", plugins: ["typescript"], sourceFilename: path });
  const ranges = [];
  // A property with the comma after it, if any (the next property's start stays where it was).
  const property = (p) => {
    const comma = /^\s*,/.exec(source.slice(p.end, p.end + 200));
    ranges.push([p.start, comma ? p.end + comma[0].length : p.end]);
  };
  // `deep`: through nested object and array literals too.
  const objectProse = (node, deep) => {
    const unwrapped =
      node.type === "TSAsExpression" || node.type === "TSSatisfiesExpression" ? node.expression : node;
    if (unwrapped.type === "ObjectExpression") {
      for (const p of unwrapped.properties) {
        if (PROSE.has(propertyName(p))) property(p);
        else if (deep && p.type === "ObjectProperty") objectProse(p.value, deep);
        else if (deep && p.type === "SpreadElement") objectProse(p.argument, deep);
      }
    } else if (deep && unwrapped.type === "ArrayExpression") {
      for (const element of unwrapped.elements) if (element) objectProse(element, deep);
    } else if (deep && unwrapped.type === "CallExpression" && DESCRIBED_CALLS.has(calleeName(unwrapped))) {
      const [first, second] = unwrapped.arguments;
      if (second) ranges.push([first.end, second.end]);
    }
  };
  const visit = (node) => {
    if (node.type === "ObjectExpression" && isRouteConfig(node)) objectProse(node, true);
    if (node.type === "CallExpression" && tools) {
      const name = calleeName(node);
      if (name === "tool" && node.arguments[0]?.type === "ObjectExpression") {
        for (const p of node.arguments[0].properties) if (TOOL_PROSE.has(propertyName(p))) property(p);
      } else if (name === "describe" && node.callee.type === "MemberExpression") {
        ranges.push([node.callee.object.end, node.end]);
      }
    }
    if (node.type === "CallExpression") {
      const name = calleeName(node);
      if (name === "openapi" && node.callee.type === "MemberExpression") {
        for (const argument of node.arguments) objectProse(argument, true);
      } else if (ROUTE_CALLS.has(name) && node.arguments[0]) {
        objectProse(node.arguments[0], true);
      }
    }
    for (const key of Object.keys(node)) {
      if (key === "loc" || key === "leadingComments" || key === "trailingComments") continue;
      const value = node[key];
      if (Array.isArray(value)) {
        for (const child of value) if (child && typeof child.type === "string") visit(child);
      } else if (value && typeof value.type === "string") visit(value);
    }
  };
  visit(ast.program);
  return ranges;
}

/** `source` (the TypeScript module at `path`) with the document's prose blanked: `{ text, blanked }`. */
export function stripDocumentText(source, path, options) {
  const ranges = proseRanges(source, path, options).sort((a, b) => a[0] - b[0]);
  let [text, at, blanked] = ["", 0, 0];
  for (const [start, end] of ranges) {
    if (start < at) continue; // inside a range already blanked
    text += source.slice(at, start) + source.slice(start, end).replace(/[^\n]/g, " ");
    at = end;
    blanked++;
  }
  return { text: text + source.slice(at), blanked };
}

/**
 * The esbuild plugin of the deployed build: every module of `src/` loaded with its prose blanked,
 * the MCP tools' (src/mcp/tools/) with their titles and descriptions too (`tool({ title,
 * description })`, an argument's `.describe(…)`), which only `tools/list` reads, answered there from
 * the build's assets (src/mcp/tool-list.ts); the MCP server's own modules as they are (its
 * `instructions` are `initialize`'s answer).
 */
export const documentTextPlugin = {
  name: "document-text",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, ({ path }) => {
      const tools = /[\\/]src[\\/]mcp[\\/]tools[\\/]/.test(path);
      if (!tools && /[\\/]src[\\/]mcp[\\/]/.test(path)) return undefined;
      return { contents: stripDocumentText(readFileSync(path, "utf8"), path, { tools }).text, loader: "ts" };
    });
  },
};

/** zod-to-openapi as @hono/zod-openapi imports it in the deployed build: the registry, no metadata. */
const REGISTRY_ONLY = `export { OpenAPIRegistry, getOpenApiMetadata } from "@asteasolutions/zod-to-openapi";
export function extendZodWithOpenApi(zod) {
  zod.ZodType.prototype.openapi ??= function () { return this; };
}
class DocumentFromTheBuild {
  constructor() {
    throw new Error("the deployed build generates no OpenAPI document: its /openapi.json is the build's (scripts/build-document.mjs)");
  }
}
export { DocumentFromTheBuild as OpenApiGeneratorV3, DocumentFromTheBuild as OpenApiGeneratorV31 };
`;

/** @hono/zod-openapi's entry as the deployed build loads it (`documentGeneratorPlugin`). */
export function zodOpenApiEntry(source) {
  const edits = [
    ['import { z } from "zod";', 'import * as z from "zod";'],
    ["extendZodWithOpenApi(z);", "extendZodWithOpenApi({ ZodType: z.ZodType });"],
  ];
  for (const [from, to] of edits) {
    if (source.split(from).length !== 2) {
      throw new Error(`@hono/zod-openapi's entry has no single \`${from}\` (scripts/build-document.mjs)`);
    }
    source = source.replace(from, to);
  }
  return source;
}

export const documentGeneratorPlugin = {
  name: "document-generator",
  setup(build) {
    build.onLoad(
      { filter: /[\\/]node_modules[\\/]@hono[\\/]zod-openapi[\\/]dist[\\/]index\.mjs$/ },
      ({ path }) => ({
        contents: zodOpenApiEntry(readFileSync(path, "utf8")),
        loader: "js",
      }),
    );
    build.onResolve({ filter: /^@asteasolutions\/zod-to-openapi$/ }, ({ importer }) =>
      /[\\/]node_modules[\\/]@hono[\\/]zod-openapi[\\/]/.test(importer)
        ? { path: "@hono/zod-openapi's zod-to-openapi", namespace: "document-generator" }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "document-generator" }, () => ({
      contents: REGISTRY_ONLY,
      loader: "js",
      resolveDir: root,
    }));
  },
};

/**
 * zod's JSON Schema conversion as the deployed build loads it: every export of its two modules
 * (`to-json-schema.js`, `json-schema-processors.js`) a function that says the build has none. Every
 * schema kind refers to its converter, so the bundle keeps them all (20 KB) though no code of the
 * build converts: the MCP server's `tools/list`, the only caller, is an asset there too
 * (src/mcp/tool-list.ts). The two methods zod makes for each schema (`toJSONSchema`, `~standard`'s
 * `jsonSchema`) are made as ever, and throw when called.
 */
const JSON_SCHEMA_MODULES =
  /[\\/]node_modules[\\/]zod[\\/]v4[\\/]core[\\/](to-json-schema|json-schema-processors)\.js$/;
const METHOD_FACTORIES = new Set(["createToJSONSchemaMethod", "createStandardJSONSchemaMethod"]);

/** The stand-in of zod's module `source`: the same exports, none of which converts. */
export function jsonSchemaStub(source, path) {
  const names = [
    ...[...source.matchAll(/^export (?:async )?(?:function\*?|const|let|class) ([\w$]+)/gm)].map((m) => m[1]),
    ...[...source.matchAll(/^export \{([^}]*)\}/gm)].flatMap((m) =>
      m[1]
        .split(",")
        .map((s) =>
          s
            .trim()
            .split(/\s+as\s+/)
            .at(-1),
        )
        .filter(Boolean),
    ),
  ];
  if (names.length === 0 || /^export (\*|default)/m.test(source)) {
    throw new Error(`${path}: not the exports scripts/build-document.mjs stands in for`);
  }
  const factories = names.filter((name) => METHOD_FACTORIES.has(name));
  return [
    'const none = () => { throw new Error("the deployed build converts no zod schema to JSON Schema (scripts/build-document.mjs)"); };',
    "const factory = () => none;",
    `export { ${names
      .filter((n) => !METHOD_FACTORIES.has(n))
      .map((n) => `none as ${n}`)
      .join(", ")} };`,
    factories.length ? `export { ${factories.map((n) => `factory as ${n}`).join(", ")} };` : "",
  ].join("\n");
}

export const jsonSchemaStubPlugin = {
  name: "json-schema-stub",
  setup(build) {
    build.onLoad({ filter: JSON_SCHEMA_MODULES }, ({ path }) => ({
      contents: jsonSchemaStub(readFileSync(path, "utf8"), path),
      loader: "js",
    }));
  },
};

/**
 * The OpenAPI document and the MCP server's `tools/list` answer as the source serves them
 * (scripts/openapi-json.ts, in Node, made once per source: ./lib/source-document.mjs), written
 * among the assets where the deployed build reads them (src/openapi/document-asset.ts,
 * src/mcp/tool-list.ts).
 */
export async function buildDocumentAsset() {
  const made = sourceDocument();
  [
    [made.document, DOCUMENT_ASSET_PATH],
    [made.tools, TOOL_LIST_ASSET_PATH],
  ].forEach(([source, path]) => {
    const target = join(DOCS_ASSETS_DIR, path);
    const contents = readFileSync(source);
    let same = false;
    try {
      same = contents.equals(readFileSync(target));
    } catch {}
    // Unchanged, a file stays as it is (a dev server watching the assets sees no change, as
    // ./docs-assets.mjs keeps it); changed, it is renamed into place (a concurrent build's reader
    // sees the old file or the new one, never half of one).
    if (same) return;
    const temporary = `${target}.${process.pid}.tmp`;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(temporary, contents);
    renameSync(temporary, target);
  });
}
