/**
 * The published document: the components every operation refers to, its top level, and the
 * handler that generates it for `/openapi.json` (`/docs` renders it: ./pages.ts).
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Handler } from "hono";
import {
  D1_BOOKMARK_HEADER,
  D1_BOOKMARK_PATTERN_SOURCE,
  D1_BOOKMARK_SENT_PATTERN_SOURCE,
} from "../db/session";
import type { AppEnv } from "../http/app-env";
import { documentedApp, type Operation } from "../http/operations";
import { setBounded } from "../lib/bounded-map";
import { loadedOncePer } from "../lib/once";
import { compactOpenApiDocument } from "./compact";
import { API_TAGS, ErrorSchema, PUBLIC_RESPONSE_HEADERS, registerSharedComponents } from "./components";
import { registerConditionalComponents } from "./conditional";
import { D1_BOOKMARK_PARAMETER } from "./define-route";
import { examplesBesideRefs } from "./examples";
import { registerListQueryParameters } from "./lists";

/**
 * A D1 bookmark: the database it is of and a colon, then 8, 8 and 8 hex digits and 32 more, joined
 * by dashes, then a dot and its MAC (43 base64url characters); the database and the MAC are
 * optional in a request, whose value is then ignored (at most 64 + 59 + 44 characters, all the
 * pattern allows).
 */
const D1_BOOKMARK_SCHEMA = { type: "string" as const, pattern: D1_BOOKMARK_PATTERN_SOURCE, maxLength: 167 };
/** What answers carry: always the database and the MAC. */
const D1_BOOKMARK_SENT_SCHEMA = {
  type: "string" as const,
  pattern: D1_BOOKMARK_SENT_PATTERN_SOURCE,
  maxLength: 167,
};

/** What the routes refer to under `components`, registered once the routes are. */
export function registerDocumentComponents(registry: OpenAPIHono<AppEnv>["openAPIRegistry"]): void {
  registry.register("Error", ErrorSchema);
  registerSharedComponents(registry);
  registerListQueryParameters(registry);
  registry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An API key of your organization (`dpk_…`).",
  });
  registry.registerComponent("parameters", D1_BOOKMARK_PARAMETER, {
    name: D1_BOOKMARK_HEADER,
    in: "header",
    required: false,
    description:
      "A D1 bookmark from an earlier response's `X-D1-Bookmark` (of this key or any other), sent back as it " +
      "came: a read then sees at least everything that response had seen. Without it, a read still sees every " +
      "earlier write made with the same key. A bookmark names its database and carries the service's MAC " +
      "(`DB:0000….<MAC>`); one of another organization's database, or one whose MAC does not verify (made up, " +
      "altered, or bare), is ignored. A value that is not a bookmark is `400 bad_input`.",
    schema: D1_BOOKMARK_SCHEMA,
  });
  registry.registerComponent("headers", D1_BOOKMARK_PARAMETER, {
    description:
      "The latest D1 bookmark this request saw (after a write, one at least as fresh as the write), after the " +
      "name of the database it is of and a colon, and followed by a dot and the service's MAC. Send it, as it is, " +
      "as the `X-D1-Bookmark` request header, from any key, to read at least that fresh. Present whenever " +
      "the request reached the database, and on a replayed write (`Idempotent-Replayed: true`), at least " +
      "as fresh as the write replayed.",
    schema: D1_BOOKMARK_SENT_SCHEMA,
  });
  registerConditionalComponents(registry, PUBLIC_RESPONSE_HEADERS);
}

/**
 * The app every operation is registered on, with the components they refer to: what the document
 * is generated from (src/http/operations.ts builds operations one by one, on their first request).
 * Built once per isolate (concurrent first requests each build it: src/lib/once.ts `loadedOnce`).
 */
export const documentedRoutes: (operations: readonly Operation[]) => Promise<OpenAPIHono<AppEnv>> =
  loadedOncePer(async (operations: readonly Operation[]) => {
    const app = await documentedApp(operations);
    registerDocumentComponents(app.openAPIRegistry);
    return app;
  });

/**
 * The handler of `GET /openapi.json` as the source serves it (./routes.ts registers it; this module,
 * with everything the document is made of, is loaded on the first request for it). The deployed
 * build serves the document it generated instead (./document-asset.ts).
 */
export function documentHandler(operations: readonly Operation[]): Handler<AppEnv> {
  // Generated once per origin in an isolate (the routes do not change while it lives), then
  // compacted (./compact.ts), its identifiers' examples set beside their references
  // (./examples.ts). Bounded: the origin comes from the request.
  const documents = new Map<string, unknown>();
  return async (c) => {
    const origin = new URL(c.req.url).origin;
    let document = documents.get(origin);
    if (!document) {
      const all = await documentedRoutes(operations);
      document = examplesBesideRefs(compactOpenApiDocument(all.getOpenAPI31Document(documentConfig(origin))));
      setBounded(documents, origin, document, 16);
    }
    return c.json(document);
  };
}

/** The document's top level; `servers` names the origin that serves it. */
function documentConfig(origin: string) {
  return {
    openapi: "3.1.0",
    info: {
      title: "Deployment Platform API",
      version: "1.1.0",
      contact: { name: "Deployment Platform API" },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
      description:
        "The public HTTP JSON API of the deployment platform. Every `/v1` request carries an `x-api-key`. " +
        "Errors answer `{code, message, cause?}`. Request bodies are JSON objects in UTF-8 (a `charset` other " +
        "than `utf-8` is refused), nested at most 64 levels, with no unpaired UTF-16 surrogate in any string. " +
        "Lists are keyset-paginated (`after`, `limit`, `sort_by`). " +
        "Every `/v1` response carries `X-Ratelimit-Limit`, `X-Ratelimit-Remaining`, `X-Ratelimit-Reset`, " +
        "`RateLimit-Policy` and `RateLimit`; each operation's policy is its `x-rate-limit-policy`. " +
        "An API key may be limited to some scopes and projects: each operation names the scope it needs " +
        "as its `x-required-scope` (a key without it is `403 forbidden`), and a key restricted to some " +
        "projects sees no other project (`404`). Every change is recorded in the audit log. " +
        "Reads see every earlier write made with the same key; `X-D1-Bookmark` (response and request " +
        "header) carries that consistency to other keys.",
    },
    servers: [
      {
        url: origin,
        description: "The deployment (production, staging or local) that serves this document.",
        "x-internal": false,
      },
    ],
    tags: API_TAGS,
    security: [{ ApiKey: [] }],
  };
}
