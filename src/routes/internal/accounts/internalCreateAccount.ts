import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../../http/app-env";
import { defineInternalRoute, jsonBody, jsonContent } from "../../../openapi/define-route";
import { AccountSchema } from "../../../schemas/organization";
import { AccountCreateBody } from "../../../schemas/organization-writes";
import { createAccount } from "../../../services/orgs/orgs";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineInternalRoute({
    method: "post",
    path: "/internal/v1/accounts",
    operationId: "internalCreateAccount",
    description: "`display_name` defaults to `name`; every profile field left out is `null`.",
    request: { body: jsonBody(AccountCreateBody) },
    responses: { 201: jsonContent(AccountSchema, "The new account.") },
  });
  app.openapi(route, async (c) => c.json(await createAccount(c.get("ctx"), c.req.valid("json")), 201));
}
