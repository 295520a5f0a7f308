/**
 * `GET /docs` and the renderer script the page loads: the Worker's own static assets (wrangler.toml
 * [assets]), made by scripts/docs-assets.mjs at build time: no CDN, no web fonts. Loaded on the
 * first request for one of them (./routes.ts).
 */
import type { Handler } from "hono";
import { encodeBase64 } from "hono/utils/encode";
import type { AppEnv } from "../http/app-env";

/** The handlers of the page (its file at `pagePath` among the assets) and of its renderer. */
export function pageHandlers(pagePath: string): Record<"docs" | "renderer", Handler<AppEnv>> {
  let policy: { html: string; csp: string } | undefined;
  const docs: Handler<AppEnv> = async (c) => {
    const page = await c.env.ASSETS.fetch(new URL(pagePath, c.req.url));
    if (!page.ok) throw new Error(`the /docs page is not among the assets (${page.status}): run the build`);
    const html = await page.text();
    if (policy?.html !== html) policy = { html, csp: await docsContentSecurityPolicy(html) };
    return c.html(html, 200, { "Content-Security-Policy": policy.csp });
  };
  const renderer: Handler<AppEnv> = async (c) => {
    const asset = await c.env.ASSETS.fetch(c.req.raw);
    return new Response(asset.body, asset); // mutable headers, for x-request-id
  };
  return { docs, renderer };
}

/**
 * The /docs page admits only its own origin: its renderer script, the document and the "try it"
 * requests all come from here, so a script injected into the page (or the document) can neither
 * load code from elsewhere nor send what it reads away. The page's one inline script (the call
 * that starts the renderer) is admitted by its SHA-256; the renderer injects its own styles,
 * so inline styles are allowed (they cannot fetch from another origin: `img-src`, `font-src`).
 * No `'unsafe-eval'`: the renderer only probes for it (a `new Function` it catches), and a browser
 * reports that probe as a violation in its console.
 */
async function docsContentSecurityPolicy(html: string): Promise<string> {
  const inline = [...html.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map(
    (m) => m[1] ?? "",
  );
  const hashes = await Promise.all(
    inline.map(async (script) => {
      const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(script));
      return `'sha256-${encodeBase64(digest)}'`;
    }),
  );
  return [
    "default-src 'self'",
    `script-src 'self' ${hashes.join(" ")}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join("; ");
}
