/**
 * /docs works offline: the page loads its renderer from this origin (the Worker's static
 * assets, wrangler.toml [assets]), never from a CDN, and that renderer is served.
 * Rendering in a real browser is checked by scripts/check-docs.mjs (README).
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DOCS_RENDERER_PATH } from "../../../src/openapi/document";

describe("/docs", () => {
  it("references only same-origin URLs", async () => {
    const res = await SELF.fetch("http://api.test/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain(`<script src="${DOCS_RENDERER_PATH}">`);
    expect(html).toContain('"url": "/openapi.json"');
    // No absolute URL anywhere (src, href, url(), fetch targets): nothing leaves this origin.
    expect(html.match(/(?:https?:)?\/\/[\w.-]+\.[a-z]{2,}/gi) ?? []).toEqual([]);
  });

  it("serves the renderer from the Worker's static assets", async () => {
    const res = await SELF.fetch(`http://api.test${DOCS_RENDERER_PATH}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    const body = await res.text();
    expect(body.length).toBeGreaterThan(1_000_000);
    expect(body).toContain("createApiReference");
    // The Worker answers it (wrangler.toml: run_worker_first = true), so it carries a request id
    // and another method is a 404 like any unknown route (API_CONTRACT §6).
    expect(res.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
    const post = await SELF.fetch(`http://api.test${DOCS_RENDERER_PATH}`, { method: "POST" });
    expect(post.status).toBe(404);
    expect(await post.json()).toMatchObject({ code: "not_found" });
    expect(post.headers.get("x-request-id")).toBeTruthy();
  });
});
