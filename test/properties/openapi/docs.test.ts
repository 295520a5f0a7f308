/**
 * /docs works offline: the page loads its renderer from this origin (the Worker's static
 * assets, wrangler.toml [assets]), never from a CDN, and that renderer is served.
 * Rendering in a real browser (with no console error, and a first "Try it" answered 200) is checked
 * by scripts/check-docs.mjs (docs/development.md). And /favicon.ico, which a browser asks for.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DOCS_PAGE_PATH, DOCS_RENDERER_PATH } from "../../../src/openapi/routes";

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

  it("admits only its own origin (Content-Security-Policy): its one inline script by hash, nothing from elsewhere", async () => {
    const res = await SELF.fetch("http://api.test/docs");
    const html = await res.text();
    const csp = res.headers.get("content-security-policy") ?? "";
    const directives = new Map(
      csp.split(";").map((d) => {
        const [name = "", ...sources] = d.trim().split(/\s+/);
        return [name, sources] as const;
      }),
    );
    for (const name of [
      "default-src",
      "script-src",
      "connect-src",
      "img-src",
      "font-src",
      "frame-ancestors",
    ]) {
      expect(directives.get(name), name).toContain("'self'");
    }
    expect(directives.get("object-src")).toEqual(["'none'"]);
    // No source names another origin or a whole scheme but data: (icons); scripts not even that.
    for (const [name, sources] of directives) {
      for (const source of sources) {
        expect(source, `${name} ${source}`).toMatch(
          /^('self'|'none'|'unsafe-inline'|'sha256-[A-Za-z0-9+/]+=*'|data:)$/,
        );
      }
    }
    expect(directives.get("script-src")?.join(" ")).not.toMatch(/unsafe|data:/);
    // The inline script that starts the renderer is the one the policy admits by its digest.
    const inline = [...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
      (m) => m[1] ?? "",
    );
    expect(inline).toHaveLength(1);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(inline[0]));
    const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
    expect(directives.get("script-src")).toEqual(["'self'", `'sha256-${hash}'`]);
  });

  it("is the page the build rendered (an asset), reached at /docs only", async () => {
    const res = await SELF.fetch("http://api.test/docs");
    expect(res.headers.get("content-type")).toBe("text/html; charset=UTF-8");
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(await res.text()).toMatch(/^<!doctype html>/i);
    const file = await SELF.fetch(`http://api.test${DOCS_PAGE_PATH}`);
    expect(file.status).toBe(404);
    expect(await file.json()).toMatchObject({ code: "not_found" });
  });

  it("shows no developer toolbar (it offers to upload the document to a third party)", async () => {
    const html = await (await SELF.fetch("http://api.test/docs")).text();
    expect(html).toContain('"showDeveloperTools": "never"');
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

  it("pre-fills no header a first try would be changed by: no header parameter carries an example", async () => {
    // "Try it" and the snippets send an optional header's example as its value: a made-up ETag in
    // If-None-Match made a first try answer 304, in If-Match 409, a Last-Event-ID skipped entries.
    const doc = (await (await SELF.fetch("http://api.test/openapi.json")).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<Record<string, unknown>> }>>;
      components: { parameters: Record<string, Record<string, unknown>> };
    };
    type Parameter = { name?: string; in?: string; example?: unknown; examples?: unknown; schema?: unknown };
    const all: Parameter[] = [
      ...Object.values(doc.components.parameters),
      ...Object.values(doc.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.parameters ?? [])),
    ];
    const headers = all.filter((p) => p.in === "header");
    expect(headers.map((p) => p.name).sort()).toEqual(
      expect.arrayContaining(["If-Match", "If-None-Match", "Last-Event-ID"]),
    );
    const prefilled = headers.filter(
      (p) =>
        p.example !== undefined ||
        p.examples !== undefined ||
        (p.schema as { example?: unknown } | undefined)?.example !== undefined,
    );
    expect(prefilled.map((p) => p.name)).toEqual([]);
  });
});

describe("/favicon.ico", () => {
  it("is an icon, cached by the browser, so a page of the service logs no 404", async () => {
    const res = await SELF.fetch("http://api.test/favicon.ico");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/x-icon");
    expect(res.headers.get("cache-control")).toBe("public, max-age=86400");
    const bytes = new Uint8Array(await res.arrayBuffer());
    // An ICO header (reserved 0, type 1, one image) whose image is a PNG.
    expect([...bytes.slice(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect([...bytes.slice(22, 26)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});
