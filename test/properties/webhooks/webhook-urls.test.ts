/**
 * Webhook URLs (issue #10, API_CONTRACT §17), on createIntegration (public and internal) and
 * updateIntegration: stored normalized, a host with an empty label refused, the create answer
 * never cached.
 */
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { internal, request } from "../../helpers/api";
import type { ErrorBody } from "../../helpers/expect";
import { createOwnedProject } from "../../helpers/factories";
import { countRows } from "../../helpers/rows";

describe("webhook URLs (§17)", () => {
  afterEach(() => {
    env.ALLOW_INSECURE_WEBHOOKS = "false";
  });

  const integrationsOf = (projectId: string) => `/v1/projects/${projectId}/notification-integrations`;

  it("stores the normalized URL, on public and internal create and on PATCH", async () => {
    const { owner, project } = await createOwnedProject();
    const res = await request<{ id: string; url: string }>("POST", integrationsOf(project.id), {
      key: owner.key,
      body: { type: "webhook", url: "https://Example.COM/a/../b", configuration: {} },
    });
    expect([res.status, res.body.url]).toEqual([201, "https://example.com/b"]);
    const read = await request<{ url: string }>("GET", `${integrationsOf(project.id)}/${res.body.id}`, {
      key: owner.key,
    });
    expect(read.body.url).toBe("https://example.com/b");

    const patched = await request<{ url: string }>("PATCH", `${integrationsOf(project.id)}/${res.body.id}`, {
      key: owner.key,
      body: { url: "HTTPS://Hooks.Example.ORG:443/./x/%7e?q" },
    });
    expect([patched.status, patched.body.url]).toEqual([200, "https://hooks.example.org/x/%7e?q"]);
    // Spaces around it go, spaces inside are percent-encoded (the parser's form, as dialled).
    const spaced = await request<{ url: string }>("PATCH", `${integrationsOf(project.id)}/${res.body.id}`, {
      key: owner.key,
      body: { url: " https://hooks.example.org/a b?q=c d " },
    });
    expect([spaced.status, spaced.body.url]).toEqual([200, "https://hooks.example.org/a%20b?q=c%20d"]);

    const slack = await internal<{ url: string }>(
      "POST",
      `/projects/${project.id}/notification-integrations`,
      {
        type: "slack",
        url: "https://HOOKS.slack.com/services/T0/../T1",
        configuration: {},
      },
    );
    expect([slack.status, slack.body.url]).toEqual([201, "https://hooks.slack.com/services/T1"]);
  });

  it("a host with an empty label is 400 even with ALLOW_INSECURE_WEBHOOKS", async () => {
    env.ALLOW_INSECURE_WEBHOOKS = "true";
    const { owner, project } = await createOwnedProject();
    const made = await request<{ id: string }>("POST", integrationsOf(project.id), {
      key: owner.key,
      body: { type: "webhook", url: "http://localhost:8787/hook", configuration: {} },
    });
    expect(made.status, made.raw).toBe(201);
    const before = await countRows("notification_integrations", { projectId: project.id });
    for (const url of [
      "https://localhost../",
      "https://a..b/",
      "https://hooks.example.com../x",
      "http://.a.b/",
    ]) {
      const pub = await request<ErrorBody>("POST", integrationsOf(project.id), {
        key: owner.key,
        body: { type: "webhook", url, configuration: {} },
      });
      expect([pub.status, pub.body.code, pub.body.cause?.[0]?.path], url).toEqual([400, "bad_input", "url"]);
      const int = await internal<ErrorBody>("POST", `/projects/${project.id}/notification-integrations`, {
        type: "webhook",
        url,
        configuration: {},
      });
      expect([int.status, int.body.code], url).toEqual([400, "bad_input"]);
      const patch = await request<ErrorBody>("PATCH", `${integrationsOf(project.id)}/${made.body.id}`, {
        key: owner.key,
        body: { url },
      });
      expect([patch.status, patch.body.code], url).toEqual([400, "bad_input"]);
    }
    expect(await countRows("notification_integrations", { projectId: project.id })).toBe(before);
    const unchanged = await request<{ url: string }>("GET", `${integrationsOf(project.id)}/${made.body.id}`, {
      key: owner.key,
    });
    expect(unchanged.body.url).toBe("http://localhost:8787/hook");
    // One trailing dot (the DNS root) is a real name.
    const rooted = await request<{ url: string }>("POST", integrationsOf(project.id), {
      key: owner.key,
      body: { type: "webhook", url: "https://hooks.example.com./x", configuration: {} },
    });
    expect([rooted.status, rooted.body.url]).toEqual([201, "https://hooks.example.com./x"]);
  });

  it("the create response, public and internal, is Cache-Control: no-store", async () => {
    const { owner, project } = await createOwnedProject();
    const pub = await request<{ signing_secret: string }>("POST", integrationsOf(project.id), {
      key: owner.key,
      body: { type: "webhook", url: "https://hooks.example.com/a", configuration: {} },
    });
    expect(pub.status).toBe(201);
    expect(pub.body.signing_secret).toMatch(/^whsec_/);
    expect(pub.headers.get("cache-control")).toBe("no-store");
    const int = await internal("POST", `/projects/${project.id}/notification-integrations`, {
      type: "webhook",
      url: "https://hooks.example.com/b",
      configuration: {},
    });
    expect(int.status).toBe(201);
    expect(int.headers.get("cache-control")).toBe("no-store");
  });

  it("the create response's ETag, public and internal, is the record's as a public GET shows it", async () => {
    const { owner, project } = await createOwnedProject();
    const pub = await request<{ id: string }>("POST", integrationsOf(project.id), {
      key: owner.key,
      body: { type: "webhook", url: "https://hooks.example.com/a", configuration: {} },
    });
    // A Slack URL is shown redacted by the public API, in full by the internal one.
    const slack = await internal<{ id: string; url: string }>(
      "POST",
      `/projects/${project.id}/notification-integrations`,
      { type: "slack", url: "https://hooks.slack.com/services/T0/B0/x7Qz", configuration: {} },
    );
    expect(slack.body.url).toBe("https://hooks.slack.com/services/T0/B0/x7Qz");
    for (const created of [pub, slack]) {
      const read = await request("GET", `${integrationsOf(project.id)}/${created.body.id}`, {
        key: owner.key,
      });
      expect(created.headers.get("etag")).toMatch(/^"[0-9a-f]{32}"$/);
      expect(created.headers.get("etag")).toBe(read.headers.get("etag"));
    }
  });
});
