/** Internal API: organizations, accounts, org memberships and API keys (API_CONTRACT §9). */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { notFound } from "../../http/errors";
import { jsonBody, jsonContent } from "../../http/openapi";
import { createApiKey, revokeApiKey } from "../../services/api-keys";
import { addOrgMember, createAccount, createOrganization, orgExists } from "../../services/orgs";
import {
  AccountCreateBody,
  AnyRecord,
  ApiKeyCreateBody,
  defineInternalRoute,
  KeyIdParams,
  NameBody,
  OrgIdParams,
  OrgMemberBody,
} from "./schema";

const created = jsonContent(AnyRecord, "Created.");

export function registerInternalIdentityRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/orgs",
      request: { body: jsonBody(NameBody) },
      responses: { 201: created },
    }),
    async (c) => c.json(await createOrganization(c.get("ctx"), c.req.valid("json").name), 201),
  );

  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/accounts",
      request: { body: jsonBody(AccountCreateBody) },
      responses: { 201: created },
    }),
    async (c) => c.json(await createAccount(c.get("ctx"), c.req.valid("json")), 201),
  );

  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/orgs/{org_id}/members",
      request: { params: OrgIdParams, body: jsonBody(OrgMemberBody) },
      responses: { 201: created },
    }),
    async (c) => {
      const { account_id, role } = c.req.valid("json");
      return c.json(await addOrgMember(c.get("ctx"), c.req.valid("param").org_id, account_id, role), 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "post",
      path: "/internal/v1/orgs/{org_id}/api-keys",
      request: { params: OrgIdParams, body: jsonBody(ApiKeyCreateBody) },
      responses: { 201: created },
    }),
    async (c) => {
      const ctx = c.get("ctx");
      const { org_id } = c.req.valid("param");
      if (!(await orgExists(ctx, org_id))) throw notFound("Organization");
      const body = c.req.valid("json");
      const key = await createApiKey(ctx, {
        orgId: org_id,
        accountId: body.account_id,
        createdBy: body.created_by,
        name: body.name,
        expiresAt: body.expires_at,
      });
      return c.json(key, 201);
    },
  );

  app.openapi(
    defineInternalRoute({
      method: "delete",
      path: "/internal/v1/api-keys/{id}",
      request: { params: KeyIdParams },
      responses: { 204: { description: "Revoked." } },
    }),
    async (c) => {
      if (!(await revokeApiKey(c.get("ctx"), c.req.valid("param").id))) throw notFound("API key");
      return c.body(null, 204);
    },
  );
}
