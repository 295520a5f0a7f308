import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listOidcTrusts, oidcTrustFilterKey } from "../../services/oidc/trusts";
import { oidcTrustListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/oidc-trusts",
    operationId: "listOidcTrusts",
    tags: ["OpenID Connect"],
    summary: "List OpenID Connect trusts",
    description:
      "The organization's trusts, for a key of an org `owner` or `admin` that is not restricted to projects; any " +
      "other key sees none (an empty list).",
    request: { query: listQuery() },
    responses: { 200: jsonContent(oidcTrustListSchema(), "A page of trusts.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"), oidcTrustFilterKey());
    return c.json(await listOidcTrusts(callerContext(c), page), 200);
  });
}
