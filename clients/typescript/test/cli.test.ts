/**
 * The CLI run in-process (`run()`, the same function the bin calls) against a fake API on a real
 * socket: exit codes, tables and JSON, stderr, the requests it sends. What the real service already
 * serves is run again, packed and installed, against `npm run dev` by scripts/check-cli.mjs.
 */
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { EXIT, EXIT_CODES } from "../src/cli/io.js";
import { run } from "../src/cli/program.js";
import { deployment, entry, fakeIo, json, notFound, sse, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function fake(handler: Parameters<typeof startFake>[0]) {
  const server = await startFake(handler);
  close = server.close;
  return server;
}

const FINALS = { Good: "succeeded", Bad: "failed", Gone: "cancelled" } as const;

/** A timeline that ends in the deployment's final status. */
function timeline(res: ServerResponse, id: string, status: string) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(sse(entry(1, { type: "status", status: "queued" })));
  res.write(sse(entry(2, { message: "building", stack_id: "Stack1" })));
  res.write(sse(entry(3, { message: "oops", stream: "stderr" })));
  res.write(sse(entry(4, { type: "status", status, status_reason: status === "failed" ? "exit 1" : null })));
  res.end(`event: end\ndata: ${JSON.stringify(deployment(id, status))}\n\n`);
}

describe("deploy-platform deployments wait | follow", () => {
  it("exits 0, 1, 2 for succeeded, failed, cancelled", async () => {
    const server = await fake((_req, res, url) => {
      const [, , , id, tail] = url.pathname.split("/");
      const status = FINALS[id as keyof typeof FINALS];
      if (!status) return notFound(res, "Deployment not found.");
      if (tail === "timeline") return timeline(res, id as string, status);
      if (tail === "wait") return json(res, 200, deployment(id as string, status));
      json(res, 200, deployment(id as string, "in_progress"));
    });
    for (const [id, status] of Object.entries(FINALS)) {
      const code = { succeeded: 0, failed: 1, cancelled: 2 }[status];
      const waited = fakeIo(server.base);
      expect(await run(["deployments", "wait", id, "--timeout", "30"], waited.io, "0.0.0")).toBe(code);
      expect(waited.stdout()).toMatch(new RegExp(`^${id} ${status} after \\d+s\\n$`));
      expect(waited.stderr()).toBe("");
      const followed = fakeIo(server.base);
      expect(await run(["deployments", "follow", id], followed.io, "0.0.0")).toBe(code);
      const lines = followed.stdout().trimEnd().split("\n");
      expect(lines).toHaveLength(5);
      expect(lines[0]).toMatch(/^10:04:01 deployment → queued$/);
      expect(lines[1]).toBe("10:04:02 [Stack1] building");
      expect(lines[2]).toBe("10:04:03 ! oops");
      expect(lines[4]).toBe(`${id} ${status}`);
    }
    const unknown = fakeIo(server.base);
    expect(await run(["deployments", "follow", "Nope"], unknown.io, "0.0.0")).toBe(11);
    expect(unknown.stderr()).toMatch(
      /^error: not_found: Deployment not found\. \(HTTP 404, request req-\d+\)\n$/,
    );
  });

  it("follow --json prints one entry per line and the end record; a timeout exits 3", async () => {
    const server = await fake((_req, res, url) => {
      if (url.pathname.endsWith("/timeline") && url.pathname.includes("Good"))
        return timeline(res, "Good", "succeeded");
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(sse(entry(1)));
      const keepAlive = setInterval(() => res.write(": keep-alive\n\n"), 100);
      res.on("close", () => clearInterval(keepAlive));
    });
    const ok = fakeIo(server.base);
    expect(await run(["deployments", "follow", "Good", "--json"], ok.io, "0.0.0")).toBe(0);
    const lines = ok
      .stdout()
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq ?? l.type)).toEqual([1, 2, 3, 4, "end"]);
    expect(lines[4].deployment.status).toBe("succeeded");

    const slow = fakeIo(server.base);
    const started = Date.now();
    expect(await run(["deployments", "follow", "Slow", "--timeout", "0.5"], slow.io, "0.0.0")).toBe(3);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(slow.stdout()).toBe("10:04:01 line 1\n");
    expect(slow.stderr()).toBe(
      "timed out after 0.5 s following Slow (last entry 1; resume with --after-seq 1)\n",
    );
  });

  it("wait: exits 3 on timeout; a spinner on a terminal only", async () => {
    const server = await fake((_req, res, url) => {
      const d = deployment("Slow", "in_progress");
      if (url.pathname.endsWith("/wait")) return void setTimeout(() => json(res, 200, d), 300);
      json(res, 200, d);
    });
    const piped = fakeIo(server.base);
    expect(await run(["deployments", "wait", "Slow", "--timeout", "0.5"], piped.io, "0.0.0")).toBe(3);
    expect(piped.stdout()).toBe("Slow in_progress\n");
    expect(piped.stderr()).toBe("timed out after 0.5 s: Slow is still in_progress\n");

    const tty = fakeIo(server.base, { tty: true });
    expect(await run(["deployments", "wait", "Slow", "--timeout", "0.5"], tty.io, "0.0.0")).toBe(3);
    const ERASE = "\x1b[K";
    expect(tty.stderr()).toMatch(/\r⠋ Slow in_progress \(\d+s\)/);
    expect(tty.stderr()).toContain(`)${ERASE}`);
    expect(tty.stderr()).toContain(`\r${ERASE}timed out after 0.5 s`);

    const json_ = fakeIo(server.base, { tty: true });
    expect(await run(["deployments", "wait", "Slow", "--timeout", "0.5", "--json"], json_.io, "0.0.0")).toBe(
      3,
    );
    expect(JSON.parse(json_.stdout())).toMatchObject({ id: "Slow", status: "in_progress" });
    expect(json_.stderr()).not.toContain("⠋");
  });

  it("wait: the spinner's elapsed time runs on while a long poll brings no news", async () => {
    const server = await fake((_req, res, url) => {
      if (url.pathname.endsWith("/wait"))
        return void setTimeout(() => json(res, 200, deployment("Slow", "succeeded")), 1700);
      json(res, 200, deployment("Slow", "in_progress"));
    });
    const tty = fakeIo(server.base, { tty: true });
    expect(await run(["deployments", "wait", "Slow", "--timeout", "30"], tty.io, "0.0.0")).toBe(0);
    // One answer at 0 s, the next at 1.7 s: the frames between them count the seconds.
    const shown = [...tty.stderr().matchAll(/Slow in_progress \((\d+)s\)/g)].map((m) => Number(m[1]));
    expect(shown[0]).toBe(0);
    expect(shown).toContain(1);
    expect(shown).toEqual([...shown].sort((a, b) => a - b));
    expect(tty.stdout()).toMatch(/^Slow succeeded after [23]s\n$/);
  });

  it("redeploy prints the new deployment, and with --wait exits as wait does", async () => {
    const server = await fake((req, res, url) => {
      if (req.method === "POST" && url.pathname === "/v1/deployments/Old/redeploy")
        return json(res, 201, deployment("New", "queued", { redeploy_of: "Old" }));
      json(res, 200, deployment("New", "failed", { redeploy_of: "Old" }));
    });
    const plain = fakeIo(server.base);
    expect(await run(["deployments", "redeploy", "Old"], plain.io, "0.0.0")).toBe(0);
    expect(plain.stdout()).toBe("New queued (a redeploy of Old)\n");
    const post = server.seen.find((s) => s.method === "POST");
    expect(post?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    const waited = fakeIo(server.base);
    expect(await run(["deployments", "redeploy", "Old", "--wait"], waited.io, "0.0.0")).toBe(1);
    expect(waited.stdout()).toMatch(/^New failed after/);
  });
});

describe("deploy-platform variables", () => {
  const result = (dry: boolean) => ({
    version: 4,
    dry_run: dry,
    changes: [
      { name: "A", action: "created", type: { from: null, to: "secret" }, value_changed: true },
      { name: "B", action: "updated", type: { from: "string", to: "secret" }, value_changed: false },
      { name: "C", action: "deleted", type: { from: "secret", to: null }, value_changed: true },
      { name: "D", action: "unchanged", type: { from: "secret", to: "secret" }, value_changed: false },
    ],
  });

  it("import --dry-run sends the file as one dry-run change and prints the diff, never a value", async () => {
    const server = await fake((_req, res, _url, body) => json(res, 200, result(JSON.parse(body).dry_run)));
    const t = fakeIo(server.base, { files: { ".env": 'A="s3cret-a"\nB=s3cret-b\n' } });
    const args = [
      "variables",
      "import",
      ".env",
      "--environment",
      "Env1",
      "--dry-run",
      "--replace",
      "--type",
      "secret",
    ];
    expect(await run(args, t.io, "0.0.0")).toBe(0);
    const sent = server.seen[0];
    expect(sent?.method).toBe("PATCH");
    expect(sent?.path).toBe("/v1/environments/Env1/variables");
    expect(JSON.parse(sent?.body ?? "")).toEqual({
      dotenv: 'A="s3cret-a"\nB=s3cret-b\n',
      mode: "replace",
      dry_run: true,
      type: "secret",
    });
    expect(t.stdout()).toBe(
      [
        "ACTION   NAME  TYPE             VALUE",
        "created  A     secret           -",
        "updated  B     string → secret  same",
        "deleted  C     secret           -",
        "dry run: would make version 4: 1 created, 1 updated, 1 deleted, 1 unchanged; nothing was changed",
        "",
      ].join("\n"),
    );
    expect(t.stdout()).not.toContain("s3cret");
    expect(t.stderr()).toBe(
      "warning: a dotenv file carries no types: every entry is imported as secret (--type), so this import " +
        "would change the type of 1 variable: B (string → secret). To keep each name's type, restore a version " +
        "(`variables restore`) or apply a `variables` body built from the scope's list (the API's PATCH " +
        "{scope}/variables); --type sets one type for every entry.\n",
    );
    expect(server.seen).toHaveLength(1);
  });

  it("import names the variables whose type it changes before it applies the change, at the previewed version", async () => {
    let t: ReturnType<typeof fakeIo> | undefined;
    const warnedBeforeApply: boolean[] = [];
    const server = await fake((_req, res, _url, body) => {
      const sent = JSON.parse(body);
      if (!sent.dry_run) warnedBeforeApply.push(t?.stderr().includes("B (string → secret)") ?? false);
      json(res, 200, result(sent.dry_run));
    });
    t = fakeIo(server.base, { files: { ".env": "A=a\nB=b\nD=d\n" } });
    expect(
      await run(["variables", "import", ".env", "--environment", "Env1", "--replace"], t.io, "0.0.0"),
    ).toBe(0);
    expect(server.seen.map((r) => JSON.parse(r.body))).toEqual([
      { dotenv: "A=a\nB=b\nD=d\n", mode: "replace", dry_run: true },
      { dotenv: "A=a\nB=b\nD=d\n", mode: "replace", dry_run: false, base_version: 3 },
    ]);
    expect(warnedBeforeApply).toEqual([true]);
    expect(t.stderr()).toContain("so this import changes the type of 1 variable: B (string → secret).");
    expect(t.stdout()).toContain("version 4: 1 created, 1 updated, 1 deleted, 1 unchanged\n");

    const j = fakeIo(server.base, { files: { ".env": "B=b\n" } });
    expect(await run(["variables", "import", ".env", "--environment", "Env1", "--json"], j.io, "0.0.0")).toBe(
      0,
    );
    expect(JSON.parse(j.stderr())).toMatchObject({ notice: { code: "type_change" } });
    expect(JSON.parse(j.stdout())).toMatchObject({ version: 4, dry_run: false });
  });

  it("import from stdin into a component, merge mode; export to a private file", async () => {
    const server = await fake((_req, res, url, body) => {
      if (url.pathname.endsWith("/export")) {
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        return res.end('A="1"\nB="two \\"quoted\\""\n');
      }
      json(res, 200, { version: 2, dry_run: false, changes: JSON.parse(body).dotenv ? [] : [] });
    });
    const t = fakeIo(server.base, { stdin: "A=1\n" });
    expect(await run(["variables", "import", "-", "--component", "Comp1"], t.io, "0.0.0"), t.stderr()).toBe(
      0,
    );
    // The preview, then the change at the version it was previewed at.
    expect(server.seen.map((r) => r.path)).toEqual([
      "/v1/components/Comp1/variables",
      "/v1/components/Comp1/variables",
    ]);
    expect(server.seen.map((r) => JSON.parse(r.body))).toEqual([
      { dotenv: "A=1\n", mode: "merge", dry_run: true },
      { dotenv: "A=1\n", mode: "merge", dry_run: false, base_version: 2 },
    ]);
    expect(t.stdout()).toBe("no change (version 2)\n");
    expect(t.stderr()).toBe("");

    const out = fakeIo(server.base);
    expect(
      await run(["variables", "export", "--environment", "Env1", "-o", "prod.env"], out.io, "0.0.0"),
    ).toBe(0);
    expect(server.seen[2]?.path).toBe("/v1/environments/Env1/variables/export");
    expect(out.files["prod.env"]).toBe('A="1"\nB="two \\"quoted\\""\n');
    expect(out.modes["prod.env"]).toBe("600");
    expect(out.stdout()).toBe("");
    const printed = fakeIo(server.base);
    expect(await run(["variables", "export", "--component", "Comp1"], printed.io, "0.0.0")).toBe(0);
    expect(printed.stdout()).toBe('A="1"\nB="two \\"quoted\\""\n');
  });

  it("needs exactly one scope", async () => {
    const t = fakeIo("http://127.0.0.1:1");
    expect(await run(["variables", "export"], t.io, "0.0.0")).toBe(10);
    expect(t.stderr()).toContain("--environment <id> or --component <id>");
    const both = fakeIo("http://127.0.0.1:1");
    expect(
      await run(["variables", "export", "--environment", "a", "--component", "b"], both.io, "0.0.0"),
    ).toBe(10);
  });

  it("a 409 (base_version) exits 11 with the API's code, message and cause on stderr", async () => {
    const server = await fake((_req, res) =>
      json(res, 409, {
        code: "conflict",
        message: "The scope changed.",
        cause: [{ path: "base_version", message: "Now at 5." }],
      }),
    );
    const t = fakeIo(server.base, { files: { e: "A=1" } });
    expect(
      await run(["variables", "import", "e", "--environment", "E", "--base-version", "4"], t.io, "0.0.0"),
    ).toBe(11);
    expect(JSON.parse(server.seen[0]?.body ?? "").base_version).toBe(4);
    expect(t.stderr()).toBe(
      "error: conflict: The scope changed. (HTTP 409, request req-1)\n  base_version: Now at 5.\n",
    );
    const j = fakeIo(server.base, { files: { e: "A=1" } });
    expect(await run(["variables", "import", "e", "--environment", "E", "--json"], j.io, "0.0.0")).toBe(11);
    expect(JSON.parse(j.stderr())).toMatchObject({ status: 409, error: { code: "conflict" } });
  });
});

describe("deploy-platform variables versions | restore", () => {
  const version = (n: number, changes: unknown[]) => ({
    version: n,
    scope: { type: "environment", id: "Env1" },
    created_at: `2026-11-2${n}T10:00:00.000Z`,
    actor: { type: "api_key", account_id: "Acc1", api_key_id: "Key1" },
    request_id: `req-${n}`,
    changes,
  });
  const v3 = version(3, [
    { name: "A", action: "created", type: { from: null, to: "secret" }, value_changed: true },
    { name: "B", action: "updated", type: { from: "string", to: "secret" }, value_changed: false },
    { name: "C", action: "deleted", type: { from: "secret", to: null }, value_changed: true },
  ]);
  const v2 = version(2, [
    { name: "A", action: "updated", type: { from: "secret", to: "secret" }, value_changed: true },
  ]);

  it("versions lists a scope's versions (one page, --all, --json), or shows one", async () => {
    const server = await fake((_req, res, url) => {
      if (url.pathname.endsWith("/versions/3")) return json(res, 200, v3);
      if (url.searchParams.get("after") === "c2") return json(res, 200, { data: [v2], has_more: false });
      json(res, 200, { data: [v3], has_more: true, next_page: "c2" });
    });
    const page = fakeIo(server.base);
    expect(
      await run(["variables", "versions", "--environment", "Env1", "--limit", "1"], page.io, "0.0.0"),
    ).toBe(0);
    expect(server.seen[0]?.path).toBe("/v1/environments/Env1/variables/versions?limit=1");
    expect(page.stdout()).toBe(
      [
        "VERSION  CREATED                   BY               CHANGES",
        "3        2026-11-23T10:00:00.000Z  Acc1 (key Key1)  +A ~B -C",
        "",
      ].join("\n"),
    );
    expect(page.stderr()).toBe("more: --after c2 (or --all)\n");

    const all = fakeIo(server.base);
    expect(
      await run(["variables", "versions", "--component", "Comp1", "--all", "--json"], all.io, "0.0.0"),
    ).toBe(0);
    expect(server.seen.slice(1).map((s) => s.path)).toEqual([
      "/v1/components/Comp1/variables/versions?limit=240",
      "/v1/components/Comp1/variables/versions?after=c2&limit=240",
    ]);
    expect(JSON.parse(all.stdout())).toEqual({ data: [v3, v2], has_more: false });

    const one = fakeIo(server.base);
    expect(await run(["variables", "versions", "3", "--environment", "Env1"], one.io, "0.0.0")).toBe(0);
    expect(server.seen[3]?.path).toBe("/v1/environments/Env1/variables/versions/3");
    expect(one.stdout()).toBe(
      [
        "version: 3",
        "scope:   environment Env1",
        "created: 2026-11-23T10:00:00.000Z",
        "by:      Acc1 (key Key1)",
        "request: req-3",
        "",
        "ACTION   NAME  TYPE             VALUE",
        "created  A     secret           -",
        "updated  B     string → secret  same",
        "deleted  C     secret           -",
        "",
      ].join("\n"),
    );
  });

  it("restore sends the version and dry_run, and prints the change; a version that is not 1, 2, 3… is bad usage", async () => {
    const server = await fake((_req, res, _url, body) =>
      json(res, 200, {
        version: 8,
        dry_run: JSON.parse(body).dry_run,
        changes: [
          { name: "A", action: "updated", type: { from: "secret", to: "secret" }, value_changed: true },
        ],
      }),
    );
    const dry = fakeIo(server.base);
    expect(
      await run(["variables", "restore", "3", "--environment", "Env1", "--dry-run"], dry.io, "0.0.0"),
    ).toBe(0);
    expect(server.seen[0]).toMatchObject({
      method: "POST",
      path: "/v1/environments/Env1/variables/versions/3/restore",
    });
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({ dry_run: true });
    expect(dry.stdout()).toBe(
      "ACTION   NAME  TYPE    VALUE\nupdated  A     secret  changed\n" +
        "dry run: would make version 8: 0 created, 1 updated, 0 deleted, 0 unchanged; nothing was changed\n",
    );
    const done = fakeIo(server.base);
    expect(await run(["variables", "restore", "3", "--component", "Comp1", "--json"], done.io, "0.0.0")).toBe(
      0,
    );
    expect(server.seen[1]?.path).toBe("/v1/components/Comp1/variables/versions/3/restore");
    expect(server.seen[1]?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(done.stdout())).toMatchObject({ version: 8, dry_run: false });

    for (const bad of ["0", "1.5", "latest"]) {
      const t = fakeIo(server.base);
      expect(await run(["variables", "restore", bad, "--environment", "Env1"], t.io, "0.0.0")).toBe(10);
    }
    const none = fakeIo(server.base);
    expect(await run(["variables", "restore", "3"], none.io, "0.0.0")).toBe(10);
    expect(none.stderr()).toContain("--environment <id> or --component <id>");
    expect(server.seen).toHaveLength(2);
  });
});

describe("deploy-platform keys", () => {
  const record = {
    id: "Key2",
    name: "ci",
    org_id: "O",
    account_id: "A",
    parent_id: "Key1",
    scopes: ["deployments:read"],
    project_ids: ["P1"],
    expires_at: "2030-01-01T00:00:00.000Z",
    last_used_at: null,
    revoked_at: null,
    created_at: "2026-11-22T10:04:05.123Z",
  };

  it("create sends the narrowing asked for and shows the key once; list; revoke", async () => {
    const server = await fake((req, res) => {
      if (req.method === "POST")
        return json(res, 201, { ...record, key: "dpk_new" }, { "cache-control": "no-store" });
      if (req.method === "DELETE") return void res.writeHead(204).end();
      json(res, 200, { data: [record], has_more: false });
    });
    const c = fakeIo(server.base);
    const args = [
      "keys",
      "create",
      "--name",
      "ci",
      "--scope",
      "deployments:read",
      "--project",
      "P1",
      "--expires-at",
      "2030-01-01T00:00:00Z",
    ];
    expect(await run(args, c.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({
      name: "ci",
      scopes: ["deployments:read"],
      project_ids: ["P1"],
      expires_at: "2030-01-01T00:00:00.000Z",
    });
    expect(c.stdout()).toContain("\ndpk_new\n");
    // Once: in neither stream again.
    expect((c.stdout() + c.stderr()).split("dpk_new")).toHaveLength(2);
    expect(c.stderr()).toContain("only time the key is shown");

    const open = fakeIo(server.base);
    expect(await run(["keys", "create", "--all-projects", "--expires-at", "never"], open.io, "0.0.0")).toBe(
      0,
    );
    expect(JSON.parse(server.seen[1]?.body ?? "")).toEqual({ project_ids: null, expires_at: null });

    const l = fakeIo(server.base);
    expect(await run(["keys", "list", "--account", "A"], l.io, "0.0.0")).toBe(0);
    expect(server.seen[2]?.path).toBe("/v1/api-keys?account_id=A");
    expect(l.stdout().split("\n")[1]).toMatch(
      /^Key2\s+ci\s+A\s+Key1\s+deployments:read\s+2030-01-01T00:00:00.000Z\s+-\s+-$/,
    );

    const r = fakeIo(server.base);
    expect(await run(["keys", "revoke", "Key2"], r.io, "0.0.0")).toBe(0);
    expect(server.seen[3]).toMatchObject({ method: "DELETE", path: "/v1/api-keys/Key2" });
    expect(r.stdout()).toBe("revoked Key2 and every key made from it\n");

    const bad = fakeIo(server.base);
    expect(await run(["keys", "create", "--expires-at", "tomorrow"], bad.io, "0.0.0")).toBe(10);
    expect(server.seen).toHaveLength(4);
  });

  it("get shows one key, never the key itself", async () => {
    const server = await fake((_req, res, url) =>
      url.pathname === "/v1/api-keys/Key2"
        ? json(res, 200, record)
        : json(res, 404, { code: "not_found", message: "API key not found." }),
    );
    const g = fakeIo(server.base);
    expect(await run(["keys", "get", "Key2"], g.io, "0.0.0")).toBe(0);
    expect(server.seen[0]).toMatchObject({ method: "GET", path: "/v1/api-keys/Key2" });
    expect(g.stdout()).toBe(
      [
        "id:        Key2",
        "name:      ci",
        "account:   A",
        "parent:    Key1",
        "scopes:    deployments:read",
        "projects:  P1",
        "expires:   2030-01-01T00:00:00.000Z",
        "last used: never",
        "revoked:   no",
        "created:   2026-11-22T10:04:05.123Z",
        "",
      ].join("\n"),
    );
    const j = fakeIo(server.base);
    expect(await run(["keys", "get", "Key2", "--json"], j.io, "0.0.0")).toBe(0);
    expect(JSON.parse(j.stdout())).toEqual(record);
    const missing = fakeIo(server.base);
    expect(await run(["keys", "get", "Nope"], missing.io, "0.0.0")).toBe(11);
    expect(missing.stderr()).toMatch(/^error: not_found: API key not found\./);
  });
});

describe("configuration and failures", () => {
  it("takes the flags over the environment, a URL ending in /v1 too, and refuses to run without a URL or key", async () => {
    const server = await fake((req, res) =>
      json(res, 200, { data: [], has_more: false, key: req.headers["x-api-key"] }),
    );
    const t = fakeIo("http://127.0.0.1:1");
    expect(
      await run(["projects", "list", "--url", server.base, "--api-key", "dpk_flag"], t.io, "1.2.3"),
    ).toBe(0);
    expect(server.seen[0]?.headers["x-api-key"]).toBe("dpk_flag");
    expect(server.seen[0]?.headers["user-agent"]).toBe("deploy-platform-cli/1.2.3");
    for (const url of [`${server.base}/v1`, `${server.base}/v1/`]) {
      const v1 = fakeIo(url);
      expect(await run(["projects", "list"], v1.io, "0.0.0"), v1.stderr()).toBe(0);
    }
    expect(server.seen.slice(1).map((s) => s.path)).toEqual(["/v1/projects", "/v1/projects"]);
    const none = fakeIo(server.base);
    none.io.env = {};
    expect(await run(["whoami"], none.io, "0.0.0")).toBe(10);
    expect(none.stderr()).toContain("DEPLOY_PLATFORM_URL");
    none.io.env = { DEPLOY_PLATFORM_URL: server.base };
    expect(await run(["whoami"], none.io, "0.0.0")).toBe(10);
    expect(none.stderr()).toContain("DEPLOY_PLATFORM_API_KEY");
  });

  it("exits 10 on bad usage, 12 when the API fails or cannot be reached", async () => {
    const t = fakeIo("http://127.0.0.1:1");
    expect(await run(["deployments", "frobnicate"], t.io, "0.0.0")).toBe(10);
    expect(await run(["deployments", "wait"], t.io, "0.0.0")).toBe(10);
    expect(await run(["deployments", "list", "--status", "done"], t.io, "0.0.0")).toBe(10);
    expect(await run(["whoami"], t.io, "0.0.0")).toBe(12);
    expect(t.stderr()).toMatch(/cannot reach the API/);
    const server = await fake((_req, res) => json(res, 503, { code: "internal", message: "Down." }));
    const down = fakeIo(server.base);
    expect(await run(["deployments", "get", "X", "--json"], down.io, "0.0.0")).toBe(12);
    expect(JSON.parse(down.stderr())).toEqual({
      error: { code: "internal", message: "Down." },
      status: 503,
      request_id: expect.stringMatching(/^req-/),
    });
  }, 30_000);
});

describe("rate limits", () => {
  it("says on stderr when a 429 makes it wait, never on stdout; as JSON with --json", async () => {
    let calls = 0;
    const server = await fake((_req, res) => {
      if (++calls % 2 === 1)
        return json(res, 429, { code: "rate", message: "Slow down." }, { "retry-after": "54" });
      json(res, 200, { data: [], has_more: false });
    });
    const t = fakeIo(server.base);
    const waits: number[] = [];
    t.io.sleep = async (ms) => {
      waits.push(ms);
    };
    expect(await run(["projects", "list"], t.io, "0.0.0")).toBe(0);
    expect(waits).toEqual([54_000]);
    expect(t.stderr()).toBe("rate limited; retrying in 54 s\n");
    expect(t.stdout()).toBe("ID  NAME  CONNECTION  DEFAULT ENVIRONMENT  CREATED\n");

    const j = fakeIo(server.base);
    expect(await run(["projects", "list", "--json"], j.io, "0.0.0")).toBe(0);
    expect(JSON.parse(j.stdout())).toEqual({ data: [], has_more: false });
    expect(JSON.parse(j.stderr())).toEqual({
      notice: { code: "rate", message: "rate limited; retrying in 54 s" },
    });
  });
});

describe("exit codes", () => {
  it("--help lists every exit code, and the README and docs/ci.md list the same", async () => {
    expect(EXIT_CODES.map(([code]) => code)).toEqual(Object.values(EXIT));
    const t = fakeIo("http://127.0.0.1:1");
    expect(await run(["--help"], t.io, "0.0.0")).toBe(0);
    const help = t.stdout().slice(t.stdout().indexOf("Exit codes:"));
    expect(help.trimEnd().split("\n").slice(1)).toEqual(
      EXIT_CODES.map(([code, meaning]) => `  ${String(code).padEnd(4)}${meaning.replaceAll("`", "")}`),
    );
    const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const rows = [...readme.matchAll(/^\| (\d+) +\| (.+?) +\|$/gm)].map((m) => [Number(m[1]), m[2]]);
    expect(rows).toEqual(EXIT_CODES);
    const guide = readFileSync(new URL("../../../docs/ci.md", import.meta.url), "utf8");
    const section = guide.slice(guide.indexOf("Exit codes a CI can branch on"));
    const bold = [...section.slice(0, section.indexOf("A CI step")).matchAll(/\*\*(\d+)\*\*/g)];
    expect(bold.map((m) => Number(m[1]))).toEqual(Object.values(EXIT));
  });
});

describe("deploy-platform edge cases", () => {
  it("a --timeout that is not a number of seconds is bad usage; a revoke refused with an empty body exits 11", async () => {
    const server = await fake((_req, res) => void res.writeHead(404).end());
    const t = fakeIo(server.base);
    expect(await run(["deployments", "wait", "X", "--timeout", "soon"], t.io, "0.0.0")).toBe(10);
    expect(await run(["deployments", "follow", "X", "--timeout", "-1"], t.io, "0.0.0")).toBe(10);
    expect(t.stderr()).toContain("--timeout takes a number of seconds");
    expect(server.seen).toHaveLength(0);
    const r = fakeIo(server.base);
    expect(await run(["keys", "revoke", "K"], r.io, "0.0.0")).toBe(11);
    expect(r.stdout()).toBe("");
    expect(r.stderr()).toMatch(
      /^error: no_error_body: HTTP 404 without an error body \(HTTP 404, request req-1\)\n$/,
    );
  });

  it("a timeline that keeps failing exits 12", async () => {
    const server = await fake((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end();
    });
    const t = fakeIo(server.base);
    expect(await run(["deployments", "follow", "X"], t.io, "0.0.0")).toBe(12);
    expect(t.stderr()).toMatch(/failed 9 times in a row\n$/);
  }, 60_000);
});

describe("deploy-platform deployments and a protected environment's `waiting` (API_CONTRACT §26)", () => {
  const waiting = (id: string, extra: Record<string, unknown> = {}) =>
    deployment(id, "waiting", {
      gate: { required_approvals: 1, approvals: 0, wait_until: null, blocked_by: ["approval"] },
      ...extra,
    });

  it("wait: a deployment still `waiting` is not final: exit 3 at the timeout, `still waiting`", async () => {
    const server = await fake((_req, res, url) => {
      if (url.pathname.endsWith("/wait")) return void setTimeout(() => json(res, 200, waiting("Held")), 300);
      json(res, 200, waiting("Held"));
    });
    const t = fakeIo(server.base);
    expect(await run(["deployments", "wait", "Held", "--timeout", "0.5"], t.io, "0.0.0")).toBe(EXIT.timeout);
    expect(t.stderr()).toBe("timed out after 0.5 s: Held is still waiting\n");
  });

  it("list --status waiting asks the API for the waiting ones (the lists' filter takes `waiting`)", async () => {
    const server = await fake((_req, res) => json(res, 200, { data: [waiting("Held")], has_more: false }));
    const t = fakeIo(server.base);
    expect(await run(["deployments", "list", "--status", "waiting"], t.io, "0.0.0"), t.stderr()).toBe(0);
    const asked = server.seen.find((s) => s.path.startsWith("/v1/deployments"));
    expect(new URL(asked?.path ?? "", "http://x").searchParams.getAll("status")).toEqual(["waiting"]);
    expect(t.stdout()).toContain("waiting");
  });

  it("redeploy into a protected environment says the new deployment is `waiting`, not `queued`", async () => {
    const server = await fake((req, res, url) => {
      if (req.method === "POST" && url.pathname === "/v1/deployments/Old/redeploy")
        return json(res, 201, waiting("New", { redeploy_of: "Old" }));
      json(res, 200, waiting("New", { redeploy_of: "Old" }));
    });
    const t = fakeIo(server.base);
    expect(await run(["deployments", "redeploy", "Old"], t.io, "0.0.0")).toBe(0);
    expect(t.stdout()).toContain("New waiting");
    expect(t.stdout()).not.toContain("queued");
  });
});
