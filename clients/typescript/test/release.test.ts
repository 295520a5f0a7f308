/**
 * The commands of a release's way to production (API_CONTRACT §23–§27), run in-process against a
 * fake API on a real socket, as cli.test.ts does: the requests each sends, what it prints, its
 * exit code. scripts/check-cli.mjs runs them again, packed, against `npm run dev`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../src/cli/program.js";
import { deployment, entry, fakeIo, json, sse, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function fake(handler: (req: IncomingMessage, res: ServerResponse, url: URL, body: string) => unknown) {
  const server = await startFake(handler);
  close = server.close;
  return server;
}

const environment = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  id,
  project_id: "Proj1",
  name,
  created_at: "2026-11-22T10:00:00.000Z",
  updated_at: "2026-11-22T10:00:00.000Z",
  current_deployment_id: null,
  config_pending: false,
  ...extra,
});

const protection = (extra: Record<string, unknown> = {}) => ({
  environment_id: "Prod",
  required_approvals: 0,
  reviewer_role: "owner",
  prevent_self_review: true,
  wait_timer: 0,
  concurrency: "parallel",
  locked: null,
  updated_at: null,
  ...extra,
});

const notFoundEnv = (res: ServerResponse) =>
  json(res, 404, { code: "not_found", message: "Environment not found." });

/** A timeline that ends in `status`. */
function timeline(res: ServerResponse, id: string, status: string) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(sse(entry(1, { type: "status", status: "queued" })));
  res.write(sse(entry(2, { message: "deploying web:7" })));
  res.write(sse(entry(3, { type: "status", status })));
  res.end(`event: end\ndata: ${JSON.stringify(deployment(id, status))}\n\n`);
}

describe("deploy-platform environments", () => {
  it("list, get, create (with --copy-variables-from), rename, delete", async () => {
    const server = await fake((req, res, url, body) => {
      const route = `${req.method} ${url.pathname}`;
      if (route === "GET /v1/projects/Proj1/environments")
        return json(res, 200, {
          data: [environment("Prod", "production", { current_deployment_id: "D1", config_pending: true })],
          has_more: false,
        });
      if (route === "GET /v1/environments/Prod") return json(res, 200, environment("Prod", "production"));
      if (route === "POST /v1/projects/Proj1/environments")
        return json(res, 201, environment("Stg", JSON.parse(body).name));
      if (route === "PATCH /v1/environments/Stg")
        return json(res, 200, environment("Stg", JSON.parse(body).name));
      if (route === "DELETE /v1/environments/Stg") return void res.writeHead(204).end();
      notFoundEnv(res);
    });
    const list = fakeIo(server.base);
    expect(await run(["environments", "list", "--project", "Proj1"], list.io, "0.0.0")).toBe(0);
    expect(list.stdout()).toBe(
      [
        "ID    NAME        CURRENT DEPLOYMENT  CONFIG PENDING  CREATED",
        "Prod  production  D1                  yes             2026-11-22T10:00:00.000Z",
        "",
      ].join("\n"),
    );
    const got = fakeIo(server.base);
    expect(await run(["environments", "get", "Prod", "--json"], got.io, "0.0.0")).toBe(0);
    expect(JSON.parse(got.stdout())).toMatchObject({ id: "Prod", name: "production" });

    const created = fakeIo(server.base);
    expect(
      await run(
        ["environments", "create", "staging", "--project", "Proj1", "--copy-variables-from", "Prod"],
        created.io,
        "0.0.0",
      ),
    ).toBe(0);
    expect(server.seen[2]).toMatchObject({ method: "POST", path: "/v1/projects/Proj1/environments" });
    expect(JSON.parse(server.seen[2]?.body ?? "")).toEqual({ name: "staging", copy_variables_from: "Prod" });
    expect(server.seen[2]?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.stdout()).toBe("Stg staging created\n");

    const renamed = fakeIo(server.base);
    expect(await run(["environments", "rename", "Stg", "qa"], renamed.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[3]?.body ?? "")).toEqual({ name: "qa" });
    expect(renamed.stdout()).toBe("Stg renamed qa\n");

    const deleted = fakeIo(server.base);
    expect(await run(["environments", "delete", "Stg", "--json"], deleted.io, "0.0.0")).toBe(0);
    expect(JSON.parse(deleted.stdout())).toEqual({ id: "Stg", deleted: true });
    expect(server.seen[4]).toMatchObject({ method: "DELETE", path: "/v1/environments/Stg" });
  });

  it("an unknown environment exits 11 with the API's code and message, never a stack trace", async () => {
    const server = await fake((_req, res) => notFoundEnv(res));
    for (const args of [
      ["environments", "get", "Nope"],
      ["environments", "rename", "Nope", "x"],
      ["deploy", "Nope"],
      ["lock", "Nope", "--reason", "r"],
      ["protection", "get", "Nope"],
    ]) {
      const t = fakeIo(server.base);
      expect(await run(args, t.io, "0.0.0"), args.join(" ")).toBe(11);
      expect(t.stderr()).toMatch(
        /^error: not_found: Environment not found\. \(HTTP 404, request req-\d+\)\n$/,
      );
      expect(t.stdout()).toBe("");
    }
    const missing = fakeIo(server.base);
    expect(await run(["environments", "list"], missing.io, "0.0.0")).toBe(10);
    expect(missing.stderr()).toContain("project");
  });
});

describe("deploy-platform deploy", () => {
  it("creates the deployment from flags and follows it; the exit code is its end", async () => {
    const finals: Record<string, string> = { Good: "succeeded", Bad: "failed", Gone: "cancelled" };
    let next = "Good";
    const server = await fake((req, res, url) => {
      if (req.method === "POST") return json(res, 201, deployment(next, "queued"));
      const id = url.pathname.split("/")[3] as string;
      if (url.pathname.endsWith("/timeline")) return timeline(res, id, finals[id] as string);
      json(res, 404, { code: "not_found", message: "No such endpoint." });
    });
    const t = fakeIo(server.base);
    const args = [
      "deploy",
      "Stg",
      "--stack-ids",
      "S1,S2",
      "--stack-ids",
      "S3",
      "--patch",
      '[{"op":"replace","path":"/image","value":"web:7"}]',
      "--image",
      "registry.example/web:7",
    ];
    expect(await run(args, t.io, "0.0.0")).toBe(0);
    expect(server.seen[0]).toMatchObject({ method: "POST", path: "/v1/environments/Stg/deployments" });
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({
      stack_ids: ["S1", "S2", "S3"],
      data: {
        patch: [{ op: "replace", path: "/image", value: "web:7" }],
        source: { registry: { image: "registry.example/web:7" } },
      },
    });
    expect(server.seen[0]?.headers["idempotency-key"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(server.seen[1]?.path).toBe("/v1/deployments/Good/timeline");
    expect(t.stderr()).toBe("Good queued; following it\n");
    expect(t.stdout().trimEnd().split("\n")).toEqual([
      "10:04:01 deployment → queued",
      "10:04:02 deploying web:7",
      "10:04:03 deployment → succeeded",
      "Good succeeded",
    ]);
    for (const [id, code] of [
      ["Bad", 1],
      ["Gone", 2],
    ] as const) {
      next = id;
      const r = fakeIo(server.base);
      expect(await run(["deploy", "Stg"], r.io, "0.0.0")).toBe(code);
      expect(JSON.parse(server.seen.at(-2)?.body ?? "")).toEqual({ data: { patch: [] } });
    }
  });

  it("takes the body from a file (flags win), --no-follow prints it; bad JSON is bad usage", async () => {
    const server = await fake((_req, res) =>
      json(
        res,
        201,
        deployment("Held", "waiting", {
          gate: { required_approvals: 1, approvals: 0, wait_until: null, blocked_by: ["approval", "lock"] },
        }),
      ),
    );
    const file = JSON.stringify({
      stack_ids: ["S9"],
      data: { patch: [{ op: "add", path: "/a", value: 1 }] },
    });
    const t = fakeIo(server.base, { files: { "body.json": file } });
    expect(
      await run(["deploy", "Prod", "--file", "body.json", "--stack-ids", "S1", "--no-follow"], t.io, "0.0.0"),
    ).toBe(0);
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({
      stack_ids: ["S1"],
      data: { patch: [{ op: "add", path: "/a", value: 1 }] },
    });
    expect(t.stdout()).toBe("Held waiting; waiting on approval (0 of 1), lock\n");
    expect(server.seen).toHaveLength(1);

    const stdin = fakeIo(server.base, { stdin: file });
    expect(await run(["deploy", "Prod", "--file", "-", "--no-follow", "--json"], stdin.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[1]?.body ?? "").stack_ids).toEqual(["S9"]);
    expect(JSON.parse(stdin.stdout())).toMatchObject({ id: "Held", status: "waiting" });

    for (const bad of [
      ["--patch", "[{op:"],
      ["--source", "nope"],
      ["--file", "list.json"],
    ]) {
      const b = fakeIo(server.base, { files: { "list.json": "[]" } });
      expect(await run(["deploy", "Prod", ...bad], b.io, "0.0.0"), bad.join(" ")).toBe(10);
      expect(b.stderr()).toMatch(/^error: .*(not JSON|must hold a JSON object)/);
    }
    expect(server.seen).toHaveLength(2);
  });
});

describe("deploy-platform promote", () => {
  const plan = {
    dry_run: true,
    environment_id: "Prod",
    stacks: [{ from: "S1", to: "P1" }],
    variables: [
      { scope: { type: "environment" }, missing: ["STRIPE_KEY"], extra: [] },
      { scope: { type: "component", name: "api" }, missing: [], extra: ["OLD", "UNUSED"] },
    ],
  };
  const planLines = [
    "promote D1 to Prod",
    "",
    "STACK  TO",
    "S1     P1",
    "",
    "SCOPE          MISSING IN TARGET  EXTRA IN TARGET",
    "environment    STRIPE_KEY         -",
    "component api  -                  OLD UNUSED",
    "",
  ].join("\n");

  async function promoteApi() {
    return fake((_req, res, url, body) => {
      if (url.pathname === "/v1/deployments/Bad/promote")
        return json(res, 409, {
          code: "conflict",
          message: "Only a succeeded deployment can be promoted.",
        });
      if (url.pathname.endsWith("/timeline")) return timeline(res, "P", "succeeded");
      if (JSON.parse(body).dry_run) return json(res, 200, plan);
      json(res, 201, deployment("P", "queued", { promoted_from: "D1", environment_id: "Prod" }));
    });
  }
  const promoted = (server: Awaited<ReturnType<typeof promoteApi>>) =>
    server.seen.filter((s) => s.method === "POST" && !JSON.parse(s.body).dry_run);

  it("--dry-run prints the plan only", async () => {
    const server = await promoteApi();
    const t = fakeIo(server.base);
    expect(await run(["promote", "D1", "--to", "Prod", "--dry-run"], t.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({ environment_id: "Prod", dry_run: true });
    expect(t.stdout()).toBe(`${planLines}dry run: nothing was promoted\n`);
    const j = fakeIo(server.base);
    expect(await run(["promote", "D1", "--to", "Prod", "--dry-run", "--json"], j.io, "0.0.0")).toBe(0);
    expect(JSON.parse(j.stdout())).toEqual(plan);
    expect(promoted(server)).toHaveLength(0);
  });

  it("without a terminal and without --yes it prints the plan and refuses; --yes promotes", async () => {
    const server = await promoteApi();
    const ci = fakeIo(server.base);
    expect(await run(["promote", "D1", "--to", "Prod"], ci.io, "0.0.0")).toBe(10);
    expect(ci.stdout()).toBe(planLines);
    expect(ci.stderr()).toMatch(/^error: not promoted: .*standard input is not a terminal; pass --yes/);
    expect(promoted(server)).toHaveLength(0);

    const yes = fakeIo(server.base);
    expect(await run(["promote", "D1", "--to", "Prod", "--yes"], yes.io, "0.0.0")).toBe(0);
    expect(promoted(server)).toHaveLength(1);
    expect(JSON.parse(promoted(server)[0]?.body ?? "")).toEqual({ environment_id: "Prod" });
    expect(yes.stdout()).toBe(`${planLines}P queued (promoted from D1)\n`);

    const j = fakeIo(server.base);
    expect(await run(["promote", "D1", "--to", "Prod", "-y", "--json"], j.io, "0.0.0")).toBe(0);
    expect(JSON.parse(j.stdout())).toMatchObject({ plan, deployment: { id: "P", promoted_from: "D1" } });
  });

  it("asks on a terminal: yes promotes, anything else does not", async () => {
    const server = await promoteApi();
    const no = fakeIo(server.base, { answers: ["n"] });
    expect(await run(["promote", "D1", "--to", "Prod"], no.io, "0.0.0")).toBe(10);
    expect(no.questions).toEqual(["Promote D1 to Prod? [y/N] "]);
    expect(no.stderr()).toBe("not promoted\n");
    expect(promoted(server)).toHaveLength(0);

    const ok = fakeIo(server.base, { answers: [" Yes "] });
    expect(await run(["promote", "D1", "--to", "Prod", "--follow"], ok.io, "0.0.0")).toBe(0);
    expect(promoted(server)).toHaveLength(1);
    expect(ok.stdout()).toBe(
      `${planLines}10:04:01 deployment → queued\n10:04:02 deploying web:7\n10:04:03 deployment → succeeded\nP succeeded\n`,
    );
    expect(ok.stderr()).toBe("P queued (promoted from D1)\n");
  });

  it("a deployment that cannot be promoted exits 11 with the API's code and message", async () => {
    const server = await promoteApi();
    const t = fakeIo(server.base);
    expect(await run(["promote", "Bad", "--to", "Prod", "--yes"], t.io, "0.0.0")).toBe(11);
    expect(t.stderr()).toMatch(
      /^error: conflict: Only a succeeded deployment can be promoted\. \(HTTP 409, request req-\d+\)\n$/,
    );
    expect(t.stdout()).toBe("");
    expect(server.seen).toHaveLength(1);
    const usage = fakeIo(server.base);
    expect(await run(["promote", "D1"], usage.io, "0.0.0")).toBe(10);
    expect(await run(["promote", "D1", "--to", "P", "--yes", "--dry-run"], usage.io, "0.0.0")).toBe(10);
  });
});

describe("deploy-platform approve | reject", () => {
  it("posts the review and says what it left", async () => {
    const server = await fake((_req, res, _url, body) => {
      const { state } = JSON.parse(body);
      if (state === "approved")
        return json(
          res,
          200,
          deployment("D", "waiting", {
            gate: { required_approvals: 2, approvals: 1, wait_until: null, blocked_by: ["approval"] },
          }),
        );
      json(res, 200, deployment("D", "cancelled"));
    });
    const a = fakeIo(server.base);
    expect(await run(["approve", "D", "--comment", "LGTM"], a.io, "0.0.0")).toBe(0);
    expect(server.seen[0]).toMatchObject({ method: "POST", path: "/v1/deployments/D/reviews" });
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({ state: "approved", comment: "LGTM" });
    expect(a.stdout()).toBe("D approved: now waiting; waiting on approval (1 of 2)\n");
    const r = fakeIo(server.base);
    expect(await run(["reject", "D", "--json"], r.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[1]?.body ?? "")).toEqual({ state: "rejected" });
    expect(JSON.parse(r.stdout())).toMatchObject({ id: "D", status: "cancelled" });
  });

  it("a refused review exits 11 with the API's message", async () => {
    const server = await fake((_req, res) =>
      json(res, 403, { code: "forbidden", message: "The deployment's creator may not review it." }),
    );
    const t = fakeIo(server.base);
    expect(await run(["approve", "D"], t.io, "0.0.0")).toBe(11);
    expect(t.stderr()).toMatch(/^error: forbidden: The deployment's creator may not review it\./);
  });
});

describe("deploy-platform lock | unlock | protection", () => {
  it("lock sends the reason, unlock deletes the lock", async () => {
    const server = await fake((req, res) => {
      if (req.method === "DELETE") return void res.writeHead(204).end();
      json(
        res,
        200,
        protection({ locked: { reason: "freeze", account_id: "A", at: "2026-11-22T10:00:00.000Z" } }),
      );
    });
    const l = fakeIo(server.base);
    expect(await run(["lock", "Prod", "--reason", "freeze"], l.io, "0.0.0")).toBe(0);
    expect(server.seen[0]).toMatchObject({ method: "POST", path: "/v1/environments/Prod/lock" });
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({ reason: "freeze" });
    expect(l.stdout()).toBe("locked Prod: freeze\n");
    const u = fakeIo(server.base);
    expect(await run(["unlock", "Prod"], u.io, "0.0.0")).toBe(0);
    expect(server.seen[1]).toMatchObject({ method: "DELETE", path: "/v1/environments/Prod/lock" });
    expect(u.stdout()).toBe("unlocked Prod\n");
    const noReason = fakeIo(server.base);
    expect(await run(["lock", "Prod"], noReason.io, "0.0.0")).toBe(10);
  });

  it("protection get prints it; set changes what it is given, the rest as read, under If-Match", async () => {
    const server = await fake((req, res, _url, body) => {
      if (req.method === "PUT")
        return req.headers["if-match"] === '"v1"'
          ? json(res, 200, protection(JSON.parse(body)))
          : json(res, 409, { code: "conflict", message: "Changed since read." });
      json(res, 200, protection({ concurrency: "serial" }), { etag: '"v1"' });
    });
    const g = fakeIo(server.base);
    expect(await run(["protection", "get", "Prod"], g.io, "0.0.0")).toBe(0);
    expect(g.stdout()).toBe(
      [
        "environment:         Prod",
        "required approvals:  0",
        "reviewer role:       owner",
        "prevent self review: yes",
        "wait timer:          0 s",
        "concurrency:         serial",
        "locked:              no",
        "updated:             never",
        "",
      ].join("\n"),
    );
    const s = fakeIo(server.base);
    const args = [
      "protection",
      "set",
      "Prod",
      "--required-approvals",
      "1",
      "--no-prevent-self-review",
      "--json",
    ];
    expect(await run(args, s.io, "0.0.0")).toBe(0);
    const put = server.seen.find((x) => x.method === "PUT");
    expect(put?.headers["if-match"]).toBe('"v1"');
    expect(JSON.parse(put?.body ?? "")).toEqual({
      required_approvals: 1,
      reviewer_role: "owner",
      prevent_self_review: false,
      wait_timer: 0,
      concurrency: "serial",
    });
    expect(JSON.parse(s.stdout())).toMatchObject({ required_approvals: 1, prevent_self_review: false });

    const none = fakeIo(server.base);
    const before = server.seen.length;
    expect(await run(["protection", "set", "Prod"], none.io, "0.0.0")).toBe(10);
    expect(await run(["protection", "set", "Prod", "--concurrency", "sometimes"], none.io, "0.0.0")).toBe(10);
    expect(server.seen).toHaveLength(before);
  });
});

describe("deploy-platform config", () => {
  it("show prints each scope's pinned names and types; diff the changes, against current or a deployment", async () => {
    const server = await fake((_req, res, url) => {
      if (url.pathname.endsWith("/config"))
        return json(res, 200, {
          deployment_id: "D1",
          environment: {
            id: "Stg",
            version: 3,
            variables: [
              { name: "DB_PASSWORD", type: "secret" },
              { name: "LOG_LEVEL", type: "string" },
            ],
          },
          components: [{ id: "C1", name: "api", version: 0, variables: [] }],
        });
      json(res, 200, {
        deployment_id: "D1",
        against: url.searchParams.get("against") ?? "current",
        changes: [
          {
            scope: { type: "environment", id: "Stg" },
            name: "LOG_LEVEL",
            action: "updated",
            type: { from: "string", to: "string" },
            value_changed: true,
          },
          {
            scope: { type: "component", id: "C1" },
            name: "NEW",
            action: "created",
            type: { from: null, to: "secret" },
            value_changed: true,
          },
        ],
      });
    });
    const show = fakeIo(server.base);
    expect(await run(["config", "show", "D1"], show.io, "0.0.0")).toBe(0);
    expect(server.seen[0]?.path).toBe("/v1/deployments/D1/config");
    expect(show.stdout()).toBe(
      [
        "SCOPE               VERSION  NAME         TYPE",
        "environment Stg     3        DB_PASSWORD  secret",
        "environment Stg     3        LOG_LEVEL    string",
        "component api (C1)  0        -            -",
        "",
      ].join("\n"),
    );
    const diff = fakeIo(server.base);
    expect(await run(["config", "diff", "D1"], diff.io, "0.0.0")).toBe(0);
    expect(server.seen[1]?.path).toBe("/v1/deployments/D1/config/diff");
    expect(diff.stdout()).toBe(
      [
        "deployment: D1",
        "against:    current",
        "",
        "SCOPE         ACTION   NAME       TYPE    VALUE",
        "environment   updated  LOG_LEVEL  string  changed",
        "component C1  created  NEW        secret  -",
        "",
      ].join("\n"),
    );
    const against = fakeIo(server.base);
    expect(await run(["config", "diff", "D1", "--against", "D0", "--json"], against.io, "0.0.0")).toBe(0);
    expect(server.seen[2]?.path).toBe("/v1/deployments/D1/config/diff?against=D0");
    expect(JSON.parse(against.stdout()).against).toBe("D0");
  });
});

describe("deploy-platform login --oidc", () => {
  const issued = {
    id: "KeyCI",
    name: null,
    org_id: "O",
    account_id: "A",
    parent_id: "K0",
    scopes: ["deployments:write"],
    project_ids: ["Proj1"],
    expires_at: "2026-11-22T10:15:00.000Z",
    last_used_at: null,
    revoked_at: null,
    created_at: "2026-11-22T10:00:00.000Z",
    oidc: { trust_id: "T1", subject: "repo:acme/web:ref:refs/heads/main" },
    key: "dpk_issued_secret",
  };

  async function oidcApi() {
    return fake((req, res, url, body) => {
      if (url.pathname === "/actions/token")
        return req.headers.authorization === "Bearer runner-token"
          ? json(res, 200, { value: `jwt-for-${url.searchParams.get("audience")}` })
          : json(res, 401, { message: "bad runner token" });
      if (url.pathname === "/v1/oidc/token") {
        const { trust_id, token } = JSON.parse(body);
        if (trust_id === "Expired")
          return json(res, 401, { code: "unauthenticated", message: "The trust is unknown or deleted." });
        return json(
          res,
          201,
          { ...issued, oidc: { trust_id, subject: token } },
          { "cache-control": "no-store" },
        );
      }
      json(res, 200, { ...issued, key: undefined, seen_key: req.headers["x-api-key"] });
    });
  }

  it("on GitHub Actions: asks the runner for a token with the audience, exchanges it, masks and hands on the key", async () => {
    const server = await oidcApi();
    const t = fakeIo(server.base);
    t.io.env = {
      DEPLOY_PLATFORM_URL: server.base,
      HOME: "/home/runner",
      GITHUB_ACTIONS: "true",
      GITHUB_ENV: "/gh/env",
      ACTIONS_ID_TOKEN_REQUEST_URL: `${server.base}/actions/token?api-version=2.0`,
      ACTIONS_ID_TOKEN_REQUEST_TOKEN: "runner-token",
    };
    const args = ["login", "--oidc", "--trust", "T1", "--audience", "https://deploy.example"];
    expect(await run(args, t.io, "0.0.0"), t.stderr()).toBe(0);
    expect(server.seen[0]?.path).toBe(
      `/actions/token?api-version=2.0&audience=${encodeURIComponent("https://deploy.example")}`,
    );
    const exchange = server.seen[1];
    expect(exchange).toMatchObject({ method: "POST", path: "/v1/oidc/token" });
    expect(exchange?.headers["x-api-key"]).toBeUndefined();
    expect(JSON.parse(exchange?.body ?? "")).toEqual({
      trust_id: "T1",
      token: "jwt-for-https://deploy.example",
    });

    const keyFile = "/home/runner/.config/deploy-platform/api-key";
    expect(t.files[keyFile]).toBe("dpk_issued_secret\n");
    expect(t.modes[keyFile]).toBe("600");
    expect(t.files["/gh/env"]).toBe("DEPLOY_PLATFORM_API_KEY=dpk_issued_secret\n");
    const [mask, ...rest] = t.stdout().split("\n");
    expect(mask).toBe("::add-mask::dpk_issued_secret");
    expect(rest.join("\n")).not.toContain("dpk_issued_secret");
    expect(rest.join("\n")).toContain(`kept in ${keyFile} and $GITHUB_ENV`);
    expect(t.stderr()).toBe("");

    // A later command, with no key in its environment, reads the one login wrote.
    const later = fakeIo(server.base, { files: { [keyFile]: t.files[keyFile] as string } });
    later.io.env = { DEPLOY_PLATFORM_URL: server.base, HOME: "/home/runner" };
    expect(await run(["whoami"], later.io, "0.0.0")).toBe(0);
    expect(server.seen[2]?.headers["x-api-key"]).toBe("dpk_issued_secret");
  });

  it("--id-token-file, --key-file and --json: the record without the key", async () => {
    const server = await oidcApi();
    const t = fakeIo(server.base, { files: { "/tmp/id-token": "eyJ.token.sig\n" } });
    t.io.env = { DEPLOY_PLATFORM_URL: server.base };
    const args = [
      "login",
      "--oidc",
      "--trust",
      "T1",
      "--id-token-file",
      "/tmp/id-token",
      "--key-file",
      "k",
      "--json",
    ];
    expect(await run(args, t.io, "0.0.0")).toBe(0);
    expect(JSON.parse(server.seen[0]?.body ?? "")).toEqual({ trust_id: "T1", token: "eyJ.token.sig" });
    expect(t.files.k).toBe("dpk_issued_secret\n");
    expect(t.stdout()).not.toContain("dpk_issued_secret");
    const out = JSON.parse(t.stdout());
    expect(out).toMatchObject({ id: "KeyCI", key_file: "k", github_env: false });
    expect(out.key).toBeUndefined();
  });

  it("an expired or unknown trust exits 11 with the API's message; a missing token source or audience is bad usage", async () => {
    const server = await oidcApi();
    const expired = fakeIo(server.base, { files: { tok: "eyJ" } });
    expired.io.env = { DEPLOY_PLATFORM_URL: server.base, HOME: "/h" };
    expect(
      await run(["login", "--oidc", "--trust", "Expired", "--id-token-file", "tok"], expired.io, "0.0.0"),
    ).toBe(11);
    expect(expired.stderr()).toMatch(/^error: unauthenticated: The trust is unknown or deleted\. \(HTTP 401/);
    expect(Object.keys(expired.files)).toEqual(["tok"]);

    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [["login"], {}, /--oidc/],
      [["login", "--oidc"], {}, /--trust/],
      [["login", "--oidc", "--trust", "T1"], {}, /no ID token/],
      [
        ["login", "--oidc", "--trust", "T1"],
        { ACTIONS_ID_TOKEN_REQUEST_URL: `${server.base}/actions/token`, ACTIONS_ID_TOKEN_REQUEST_TOKEN: "x" },
        /--audience/,
      ],
      [
        ["login", "--oidc", "--trust", "T1", "--audience", "a"],
        {
          ACTIONS_ID_TOKEN_REQUEST_URL: `${server.base}/actions/token`,
          ACTIONS_ID_TOKEN_REQUEST_TOKEN: "wrong",
        },
        /gave no ID token \(HTTP 401\).*id-token: write/,
      ],
    ];
    for (const [args, env, message] of cases) {
      const t = fakeIo(server.base);
      t.io.env = { DEPLOY_PLATFORM_URL: server.base, HOME: "/h", ...env };
      expect(await run(args, t.io, "0.0.0"), args.join(" ")).toBe(10);
      expect(t.stderr()).toMatch(message);
    }
    expect(server.seen.filter((s) => s.path === "/v1/oidc/token")).toHaveLength(1);
  });
});

describe("small things the README walk showed", () => {
  it("an import of a file without variables says so, and sends nothing", async () => {
    const server = await fake((_req, res) =>
      json(res, 400, { code: "bad_input", message: "Between 1 and 500 names; got 0" }),
    );
    for (const text of ["", "\n# only a comment\n\n"]) {
      const t = fakeIo(server.base, { files: { "empty.env": text } });
      expect(
        await run(["variables", "import", "empty.env", "--environment", "E", "--replace"], t.io, "0.0.0"),
      ).toBe(10);
      expect(t.stderr()).toMatch(
        /^error: empty.env holds no variables \(only blank lines or comments\): nothing to import\n/,
      );
    }
    expect(server.seen).toHaveLength(0);
  });

  it("deployments list takes --status waiting", async () => {
    const server = await fake((_req, res) => json(res, 200, { data: [], has_more: false }));
    const t = fakeIo(server.base);
    expect(await run(["deployments", "list", "--status", "waiting", "--json"], t.io, "0.0.0")).toBe(0);
    expect(server.seen[0]?.path).toBe("/v1/deployments?status=waiting");
  });

  it("deploy on a terminal: a spinner with the elapsed time on stderr, cleared before each log line", async () => {
    const server = await fake((req, res, url) => {
      if (req.method === "POST") return json(res, 201, deployment("Good", "queued"));
      if (url.pathname.endsWith("/timeline")) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(sse(entry(1, { type: "status", status: "queued" })));
        setTimeout(() => {
          res.write(sse(entry(2, { type: "status", status: "succeeded" })));
          res.end(`event: end\ndata: ${JSON.stringify(deployment("Good", "succeeded"))}\n\n`);
        }, 300);
      }
    });
    const t = fakeIo(server.base, { tty: true });
    expect(await run(["deploy", "Stg"], t.io, "0.0.0")).toBe(0);
    expect(t.stderr()).toMatch(/\r⠋ Good queued \(0s\)/);
    expect(t.stdout()).not.toContain("⠋");
    // No line reaches stdout while a frame is on the terminal: each is cleared ("\r\x1b[K") first.
    let framed = false;
    let drawn = false;
    let linesAfterAFrame = 0;
    for (const [stream, text] of t.writes) {
      if (stream === "stderr") {
        framed = text !== "\r\x1b[K" && text.startsWith("\r");
        drawn ||= framed;
      } else {
        expect(framed, `${JSON.stringify(text)} written over a spinner frame`).toBe(false);
        if (drawn) linesAfterAFrame++;
      }
    }
    // Lines came while the spinner ran, so each of them needed the clear.
    expect(linesAfterAFrame).toBeGreaterThan(0);
  });
});
