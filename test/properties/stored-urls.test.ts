/**
 * No credentials in a stored URL (API_CONTRACT §33), through every operation that stores one: a
 * notification integration's `url` (public create and update, internal create), an OpenID
 * Connect trust's `issuer`, an audit stream's `url` (create and update) and a deployment check's
 * `details_url` (its conclusion). A user name or a password, in any spelling, is `400 bad_input` with
 * the field as cause path, under the production URL rules and under the local ones
 * (ALLOW_INSECURE_WEBHOOKS, ALLOW_INSECURE_OIDC_ISSUERS), and nothing is stored. The one check
 * all of them pass through: src/services/stored-url.ts (test/unit/stored-url.test.ts).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ApiResponse, request } from "../helpers/api";
import { checkedWorld, conclude } from "../helpers/checks";
import { type ErrorBody, expectError } from "../helpers/expect";
import { createDeployment, createOwnedProject } from "../helpers/factories";
import { createPublicIntegration, type Integration, integrationsPath } from "../helpers/integrations";
import { issuerServer, trustBody } from "../helpers/oidc";

type World = Awaited<ReturnType<typeof createOwnedProject>>;
type Send = (w: World, url: string, bindings: Record<string, string>) => Promise<ApiResponse<ErrorBody>>;

const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };

/** Each operation that stores a URL, and the field it stores it in. */
const OPERATIONS: Record<string, { field: string; send: Send }> = {
  createIntegration: {
    field: "url",
    send: (w, url, bindings) =>
      request("POST", integrationsPath(w.project.id), {
        key: w.owner.key,
        body: { type: "webhook", url },
        bindings,
      }),
  },
  internalCreateIntegration: {
    field: "url",
    send: (w, url, bindings) =>
      request("POST", `/internal/v1/projects/${w.project.id}/notification-integrations`, {
        headers: admin,
        body: { type: "webhook", url },
        bindings,
      }),
  },
  updateIntegration: {
    field: "url",
    send: async (w, url, bindings) => {
      const made = await createPublicIntegration(w.owner, w.project.id);
      const res = await request<ErrorBody>("PATCH", `${integrationsPath(w.project.id)}/${made.id}`, {
        key: w.owner.key,
        body: { url },
        bindings,
      });
      const read = await request<Integration>("GET", `${integrationsPath(w.project.id)}/${made.id}`, {
        key: w.owner.key,
      });
      // Refused, the integration keeps its URL.
      if (res.status >= 400) expect(read.body.url).toBe(made.url);
      return res;
    },
  },
  createOidcTrust: {
    field: "issuer",
    send: (w, issuer, bindings) =>
      request("POST", "/v1/oidc-trusts", { key: w.owner.key, body: trustBody(issuer), bindings }),
  },
  // Disabled: nothing is sent to the receiver. A world makes at most 5 (§29): the refused ones make none.
  createAuditStream: {
    field: "url",
    send: (w, url, bindings) =>
      request("POST", `/v1/orgs/${w.org.id}/audit-streams`, {
        key: w.owner.key,
        body: { name: "SIEM", url, enabled: false },
        bindings,
      }),
  },
  updateAuditStream: {
    field: "url",
    send: async (w, url, bindings) => {
      const made = await request<{ id: string; url: string }>("POST", `/v1/orgs/${w.org.id}/audit-streams`, {
        key: w.owner.key,
        body: { name: "SIEM", url: "https://siem.example.com/ingest", enabled: false },
      });
      const path = `/v1/audit-streams/${made.body.id}`;
      const res = await request<ErrorBody>("PATCH", path, { key: w.owner.key, body: { url }, bindings });
      // Refused, the stream keeps its URL; either way it is deleted (a world holds 5 at most, §29).
      const read = await request<{ url: string }>("GET", path, { key: w.owner.key });
      if (res.status >= 400) expect(read.body.url).toBe(made.body.url);
      await request("DELETE", path, { key: w.owner.key });
      return res;
    },
  },
};

/** URLs with credentials, each under the production rules and the local ones. */
const CREDENTIALED = (local: string) => ({
  production: [
    "https://user:pass@hooks.example.com/deploys",
    "https://deploy-bot@hooks.example.com/",
    "https://:s3cret@hooks.example.com/deploys",
    "https://us%40er:p%3Ass@hooks.example.com/deploys",
  ],
  local: [local.replace("://", "://user:pass@"), local.replace("://", "://ci@")],
});

const LOCAL_RULES = { ALLOW_INSECURE_WEBHOOKS: "true", ALLOW_INSECURE_OIDC_ISSUERS: "true" };
const PRODUCTION_RULES = { ALLOW_INSECURE_WEBHOOKS: "false", ALLOW_INSECURE_OIDC_ISSUERS: "false" };

/** What the organization stores: no URL of these may be among its integrations and trusts. */
async function storedUrls(orgId: string, projectId: string): Promise<string[]> {
  const rows = await env.DB.prepare(
    `SELECT url FROM notification_integrations WHERE project_id = ?1
     UNION ALL SELECT issuer FROM oidc_trusts WHERE org_id = ?2
     UNION ALL SELECT url FROM audit_streams WHERE org_id = ?2`,
  )
    .bind(projectId, orgId)
    .all<{ url: string }>();
  return rows.results.map((r) => r.url);
}

describe("a stored URL holds no credentials (§33)", () => {
  it.each(Object.keys(OPERATIONS))(
    "%s: a user name or password is 400 bad_input at the field, storing nothing",
    async (label) => {
      const { field, send } = OPERATIONS[label] as (typeof OPERATIONS)[string];
      const w = await createOwnedProject();
      const urls = CREDENTIALED(`${issuerServer().origin}/hooks/x`);
      for (const [rules, bindings] of [
        [urls.production, PRODUCTION_RULES],
        [urls.local, LOCAL_RULES],
        // The production URLs under the local rules too: credentials are refused under either.
        [urls.production, LOCAL_RULES],
      ] as const) {
        for (const url of rules) {
          const res = await send(w, url, bindings);
          const body = expectError(res, 400, "bad_input", field);
          expect(body.cause?.find((c) => c.path === field)?.message, url).toMatch(/user name or password/);
        }
      }
      const stored = await storedUrls(w.org.id, w.project.id);
      expect(stored.filter((url) => /@/.test(url))).toEqual([]);
    },
  );

  it.each(Object.keys(OPERATIONS))("%s: the same URL without credentials is taken", async (label) => {
    const { send } = OPERATIONS[label] as (typeof OPERATIONS)[string];
    const w = await createOwnedProject();
    const res = await send(w, `${issuerServer().origin}/hooks/${crypto.randomUUID()}`, LOCAL_RULES);
    expect(res.status, res.raw).toBeLessThan(300);
  });
});

describe("a deployment check's details_url holds no credentials (§33)", () => {
  it("a user name or password is 400 bad_input at details_url, concluding nothing; without them it is stored", async () => {
    const w = await checkedWorld();
    const deployment = await createDeployment(w.environmentId, [w.stack.id]);
    expect(deployment.status).toBe("waiting");
    for (const url of CREDENTIALED("https://ci.example.com/runs/1").production) {
      const res = await conclude(w.owner, deployment.id, "e2e", { conclusion: "passed", details_url: url });
      const body = expectError(res, 400, "bad_input", "details_url");
      expect(body.cause?.find((c) => c.path === "details_url")?.message, url).toMatch(
        /user name or password/,
      );
    }
    const clean = "https://ci.example.com/runs/1";
    const res = await conclude(w.owner, deployment.id, "e2e", { conclusion: "passed", details_url: clean });
    expect(res.status, res.raw).toBe(200);
    expect(res.body.gate?.checks?.find((c) => c.name === "e2e")).toMatchObject({
      state: "passed",
      details_url: clean,
    });
  });

  it("is an https:// URL as written, stored as sent: a spelling the URL parser would mend is 400", async () => {
    const w = await checkedWorld([{ name: "e2e", timeout: 600, on_timeout: "fail" }]);
    const deployment = await createDeployment(w.environmentId, [w.stack.id]);
    // Each would parse (the parser strips the space, drops the tab, reads `\\` as `/`), and none is
    // what a reader should get back: refused at details_url, nothing concluded.
    const mended = [
      " https://ci.example.com/runs/1",
      "\thttps://ci.example.com/runs/1",
      "https://ci.example.com/runs/1\n",
      "https:ci.example.com/runs/1",
      "https://ci.exam\tple.com/runs/1",
      "https:\\\\ci.example.com\\runs\\1",
      "https://ci.example.com/runs 1",
      "HTTPS:/ci.example.com/runs/1",
    ];
    for (const spelling of mended) {
      const res = await conclude(w.owner, deployment.id, "e2e", {
        conclusion: "passed",
        details_url: spelling,
      });
      expectError(res, 400, "bad_input", "details_url");
    }
    // What is written as a URL comes back exactly so, whatever the parser would have made of it.
    const exact = [
      "https://ci.example.com",
      "HTTPS://CI.Example.com/Runs/1?x=é#y",
      `https://ci.example.com/${"é".repeat(1977)}`,
    ];
    for (const url of exact) {
      const next = await createDeployment(w.environmentId, [w.stack.id]);
      const res = await conclude(w.owner, next.id, "e2e", { conclusion: "passed", details_url: url });
      expect(res.status, res.raw).toBe(200);
      expect(res.body.gate?.checks?.find((c) => c.name === "e2e")?.details_url).toBe(url);
    }
  });
});
