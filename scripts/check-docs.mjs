#!/usr/bin/env node
// Loads /docs in headless Chromium and checks that the API reference renders its operations
// with no request leaving the origin (works offline). Not part of `npm test`: it needs a
// system Chromium (Debian: `apt-get install -y chromium`).
//   node scripts/check-docs.mjs                  starts `npm run dev` on a free port, then checks
//   node scripts/check-docs.mjs http://host:port  checks a running server
// Options: --chromium <path> (default /usr/bin/chromium), --screenshot <file.png>.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startDevServer } from "./dev-server.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args.splice(i, 2)[1];
};
const executablePath = option("--chromium", "/usr/bin/chromium");
const screenshot = option("--screenshot", undefined);
let base = args[0];
let server;

const profile = mkdtempSync(join(tmpdir(), "check-docs-"));
let browser;
let failed = false;
try {
  if (!base) {
    server = await startDevServer(profile);
    base = server.base;
  }
  // A fresh profile directory (its own --user-data-dir), removed afterwards.
  browser = await chromium.launchPersistentContext(join(profile, "chromium"), {
    executablePath,
    viewport: { width: 1400, height: 1000 },
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const page = await browser.newPage();
  const origin = new URL(base).origin;
  const foreign = [];
  // Offline: any request to another origin is recorded and refused.
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    foreign.push(url);
    return route.abort();
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${base}/docs`, { waitUntil: "load" });
  try {
    await page.getByText("Create an organization").first().waitFor({ timeout: 30_000 });
    // The reference renders a tag's operations once it is opened, as a reader would.
    await page.locator("aside, nav").getByText("Projects", { exact: true }).first().click();
    await page.getByText("Create a project").first().waitFor({ timeout: 30_000 });
  } finally {
    if (screenshot) await page.screenshot({ path: screenshot, fullPage: false });
  }
  const operations = await page.getByText(/^(List|Create|Read|Replace|Delete)\b/).count();
  console.log(
    `check-docs: ${base}/docs rendered ("Create an organization" and "Create a project" found, ${operations} operation labels)`,
  );
  if (foreign.length) {
    failed = true;
    console.error(`check-docs: requests left the origin:\n  ${foreign.join("\n  ")}`);
  }
  if (errors.length) {
    failed = true;
    console.error(`check-docs: page errors:\n  ${errors.join("\n  ")}`);
  }
} catch (err) {
  failed = true;
  console.error(`check-docs: ${err.message}`);
} finally {
  await browser?.close();
  server?.stop();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
