import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { redactSlackUrl } from "../../src/services/integrations/integrations";
import { buildWebhookRequest } from "../../src/webhooks/deliver";
import {
  MAX_ATTEMPTS,
  parseRetryAfter,
  RETRY_DELAYS_SECONDS,
  retryDelaySeconds,
} from "../../src/webhooks/retry";
import { activeSecrets, newSigningSecret, signWebhook } from "../../src/webhooks/signing";
import { escapeSlack, slackText } from "../../src/webhooks/slack";
import { checkWebhookUrl } from "../../src/webhooks/url-guard";

describe("signing (Standard Webhooks)", () => {
  // The reference vector of the Standard Webhooks libraries.
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
  const timestamp = 1614265330;
  const payload = '{"test": 2432232314}';

  it("matches the reference test vector", async () => {
    expect(await signWebhook(secret, id, timestamp, payload)).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("is accepted by the standardwebhooks package, and a changed body is not", async () => {
    const now = Math.floor(Date.now() / 1000);
    const signature = await signWebhook(secret, id, now, payload);
    const headers = { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": signature };
    expect(new Webhook(secret).verify(payload, headers)).toEqual({ test: 2432232314 });
    expect(() => new Webhook(secret).verify('{"test": 1}', headers)).toThrow();
    expect(() =>
      new Webhook("whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=").verify(payload, headers),
    ).toThrow();
  });

  it("signs with every given secret, newest first, one space apart; each verifies alone", async () => {
    const now = Math.floor(Date.now() / 1000);
    const next = newSigningSecret();
    const signature = await signWebhook([next, secret], id, now, payload);
    expect(signature).toBe(
      `${await signWebhook(next, id, now, payload)} ${await signWebhook(secret, id, now, payload)}`,
    );
    const headers = { "webhook-id": id, "webhook-timestamp": String(now), "webhook-signature": signature };
    expect(new Webhook(next).verify(payload, headers)).toEqual({ test: 2432232314 });
    expect(new Webhook(secret).verify(payload, headers)).toEqual({ test: 2432232314 });
  });

  it("keeps the previous secret only until it expires", () => {
    const at = Date.parse("2026-11-22T10:00:00.000Z");
    expect(activeSecrets("new", "old", "2026-11-22T10:00:00.001Z", at)).toEqual(["new", "old"]);
    expect(activeSecrets("new", "old", "2026-11-22T10:00:00.000Z", at)).toEqual(["new"]);
    expect(activeSecrets("new", null, null, at)).toEqual(["new"]);
  });

  it("shows a Slack URL as origin, /… and the last 4 characters of the path", () => {
    expect(redactSlackUrl("https://hooks.slack.com/services/T0/B0/abcdefghx7Qz")).toBe(
      "https://hooks.slack.com/…x7Qz",
    );
    expect(redactSlackUrl("https://hooks.slack.com/services/T0/B0/abcd?token=secret")).toBe(
      "https://hooks.slack.com/…abcd",
    );
  });

  it("makes fresh secrets of 32 random bytes", () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(atob(a.slice(6))).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });

  it("builds a request whose headers verify, with the event ID as webhook-id", async () => {
    const signingSecret = newSigningSecret();
    const event = {
      id: "evt1",
      type: "service.ok",
      createdAt: "2026-11-22T10:04:05.123Z",
      data: { project_id: "p" },
    };
    const ts = Math.floor(Date.now() / 1000);
    const req = await buildWebhookRequest(
      { type: "webhook", url: "https://x.example.com", signingSecrets: [signingSecret] },
      event,
      ts,
    );
    expect(JSON.parse(req.body)).toEqual({
      type: "service.ok",
      timestamp: event.createdAt,
      data: { project_id: "p" },
    });
    expect(req.headers["webhook-id"]).toBe("evt1");
    expect(req.headers["content-type"]).toBe("application/json");
    expect(new Webhook(signingSecret).verify(req.body, req.headers)).toBeTruthy();
    const slack = await buildWebhookRequest(
      { type: "slack", url: "https://hooks.slack.com/x", signingSecrets: [signingSecret] },
      event,
      ts,
    );
    expect(JSON.parse(slack.body)).toEqual({ text: ":large_green_circle: A service is OK (project `p`)" });
  });
});

describe("Slack text", () => {
  const deployment = { id: "dep1", environment_id: "env1", status: "failed" };
  it.each([
    [
      "deployment.in_progress",
      { deployment },
      ":hourglass_flowing_sand: Deployment `dep1` is in progress in environment `env1` (project `p1`)",
    ],
    [
      "deployment.succeeded",
      { deployment },
      ":white_check_mark: Deployment `dep1` succeeded in environment `env1` (project `p1`)",
    ],
    [
      "deployment.failed",
      { deployment },
      ":x: Deployment `dep1` failed in environment `env1` (project `p1`)",
    ],
    ["changelog.created", { title: "v2 is out" }, ":memo: Changelog: v2 is out (project `p1`)"],
    ["changelog.created", {}, ":memo: Changelog: new entry (project `p1`)"],
    [
      "promotion.created",
      { summary: "staging → production" },
      ":rocket: Promotion: staging → production (project `p1`)",
    ],
    [
      "service.in_alarm",
      { service: "api", reason: "p99 > 2 s" },
      ":rotating_light: api is in alarm: p99 &gt; 2 s (project `p1`)",
    ],
    ["service.ok", { name: "api" }, ":large_green_circle: api is OK (project `p1`)"],
  ])("%s %j", (type, data, text) => {
    expect(slackText({ type, data: { ...data, project_id: "p1" } })).toBe(text);
  });

  it("stays on one line, escapes control characters and truncates long fields", () => {
    const text = slackText({ type: "changelog.created", data: { title: `<!channel>\n${"x".repeat(500)}` } });
    expect(text).not.toContain("\n");
    expect(text).toContain("&lt;!channel&gt;");
    expect(text.length).toBeLessThan(260);
    expect(escapeSlack("a & <b>")).toBe("a &amp; &lt;b&gt;");
  });
});

describe("URL guard", () => {
  const secure = { allowInsecure: false };
  it.each([
    "https://hooks.example.com/deploys",
    "https://example.com",
    "https://api.customer.io:8443/hooks?x=1",
    "https://xn--bcher-kva.com/hook",
    // Reserved for tests and documentation, not local or private (API_CONTRACT §3 lists those).
    "https://receiver.test/hook",
    "https://hooks.example/x",
    "https://a.b.invalid/",
    "https://example.onion/",
  ])("allows %s", (url) => {
    expect(checkWebhookUrl(url, secure).ok).toBe(true);
  });

  it.each([
    ["http://hooks.example.com/x", "https://"],
    ["ftp://hooks.example.com/x", "https://"],
    ["file:///etc/passwd", "https://"],
    ["javascript:alert(1)", "https://"],
    ["gopher://example.com", "https://"],
    ["not a url", "absolute"],
    ["/relative/path", "absolute"],
    ["https://localhost/x", "local"],
    ["https://LOCALHOST./x", "local"],
    ["https://api.localhost/x", "local"],
    ["https://printer.local/x", "local"],
    ["https://db.internal/x", "local"],
    ["https://router.home.arpa/x", "local"],
    ["https://nas.lan/x", "local"],
    ["https://hooks/x", "fully qualified"],
    ["https://127.0.0.1/x", "loopback"],
    ["https://127.1.2.3/x", "loopback"],
    ["https://2130706433/x", "loopback"],
    ["https://0x7f000001/x", "loopback"],
    ["https://0177.0.0.1/x", "loopback"],
    ["https://0x7f.1/x", "loopback"],
    ["https://[::1]/x", "loopback"],
    ["https://[::ffff:127.0.0.1]/x", "IPv4-mapped loopback"],
    ["https://[::ffff:10.0.0.1]/x", "IPv4-mapped private"],
    ["https://10.1.2.3/x", "private"],
    ["https://172.16.0.1/x", "private"],
    ["https://172.31.255.255/x", "private"],
    ["https://192.168.1.1/x", "private"],
    ["https://[fc00::1]/x", "private"],
    ["https://[fd12:3456::1]/x", "private"],
    ["https://169.254.169.254/latest/meta-data", "link-local"],
    ["https://[fe80::1]/x", "link-local"],
    ["https://0.0.0.0/x", "unspecified"],
    ["https://0/x", "unspecified"],
    ["https://[::]/x", "unspecified"],
    ["https://8.8.8.8/x", "IP address"],
    ["https://[2606:4700::1111]/x", "IP address"],
    ["https://good.com@127.0.0.1/x", "loopback"],
    // Checked as parsed: the tab goes, and the host dialled is the private one.
    ["https://printer\t.local/x", "local"],
  ])("refuses %s (%s)", (url, reason) => {
    const check = checkWebhookUrl(url, secure);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain(reason);
  });

  it.each([
    [" https://hooks.example.com/x ", "https://hooks.example.com/x"],
    ["https://hooks.example.com/a b?q=c d#e f", "https://hooks.example.com/a%20b?q=c%20d#e%20f"],
    ["https://hooks.exam\nple.com/x\t", "https://hooks.example.com/x"],
  ])("takes %j as the parser reads it (API_CONTRACT §17)", (raw, href) => {
    const check = checkWebhookUrl(raw, secure);
    expect(check.ok && check.url.href).toBe(href);
  });

  it("refuses a URL longer than 2048 characters", () => {
    const check = checkWebhookUrl(`https://hooks.example.com/${"a".repeat(2100)}`, secure);
    expect(check).toEqual({ ok: false, reason: "Must be at most 2048 characters." });
  });

  it("bounds the URL as sent, not its parsed form: 2048 characters whose href is three times as long", () => {
    const raw = `https://hooks.example.com/${"é".repeat(2048 - 26)}`;
    expect(raw).toHaveLength(2048);
    const check = checkWebhookUrl(raw, secure);
    expect(check.ok && check.url.href).toBe(`https://hooks.example.com/${"%C3%A9".repeat(2048 - 26)}`);
  });

  it("allows http and loopback only with ALLOW_INSECURE_WEBHOOKS, never another scheme", () => {
    const insecure = { allowInsecure: true };
    expect(checkWebhookUrl("http://127.0.0.1:8787/hook", insecure).ok).toBe(true);
    expect(checkWebhookUrl("http://localhost/hook", insecure).ok).toBe(true);
    expect(checkWebhookUrl("file:///etc/passwd", insecure).ok).toBe(false);
  });
});

describe("retry schedule", () => {
  it("waits about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then gives up", () => {
    expect(MAX_ATTEMPTS).toBe(7);
    const delays = Array.from({ length: MAX_ATTEMPTS }, (_, i) => retryDelaySeconds(i + 1));
    expect(delays).toEqual([...RETRY_DELAYS_SECONDS, null]);
    expect(delays.slice(0, 6)).toEqual([5, 300, 1800, 7200, 18000, 36000]);
  });

  it("lengthens a wait for Retry-After, never shortens it, and caps it at the queue's 12 h", () => {
    expect(retryDelaySeconds(1, 120)).toBe(120);
    expect(retryDelaySeconds(3, 10)).toBe(1800);
    expect(retryDelaySeconds(2, 10 ** 9)).toBe(43200);
    expect(retryDelaySeconds(MAX_ATTEMPTS, 60)).toBeNull();
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter("Sun, 22 Nov 2026 10:01:00 GMT", now)).toBe(60);
    expect(parseRetryAfter("Sun, 22 Nov 2026 09:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});
