// The OpenAPI document's text, left out of the deployed Worker's modules (issue #80's bundle).
//
// Routes and schemas carry the document's prose where they are declared: an operation's `summary`
// and `description`, a response's description, a schema's `.openapi({ description, example })`.
// Only `GET /openapi.json` reads it, and the deployed build serves that document as the build
// generated it from the source (scripts/build.mjs: an asset beside the /docs page), so the modules
// it uploads need none of it: every new isolate compiles every module of the upload, prose too.
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
//     `jsonBody` and `optionalJsonBody` called there.
// A blanked property or argument is replaced by spaces (its newlines kept), its comma with it, so
// every other character keeps its line and column and the source maps stay true.
import { readFileSync } from "node:fs";
import { parse } from "@babel/parser";

const PROSE = new Set(["description", "summary", "example", "examples"]);
const ROUTE_CALLS = new Set(["defineRoute", "defineInternalRoute", "createRoute"]);
const DESCRIBED_CALLS = new Set(["jsonContent", "jsonBody", "optionalJsonBody"]);

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
function proseRanges(source, path) {
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
export function stripDocumentText(source, path) {
  const ranges = proseRanges(source, path).sort((a, b) => a[0] - b[0]);
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
 * The esbuild plugin of the deployed build: every module of `src/` but the MCP server's (whose
 * tools' descriptions are what `tools/list` answers) loaded with its prose blanked.
 */
export const documentTextPlugin = {
  name: "document-text",
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, ({ path }) => {
      if (/[\\/]src[\\/]mcp[\\/]/.test(path)) return undefined;
      return { contents: stripDocumentText(readFileSync(path, "utf8"), path).text, loader: "ts" };
    });
  },
};
