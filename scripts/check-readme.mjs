#!/usr/bin/env node
// README.md and the guides of docs/ as a newcomer walks them: every ```sh block, in order, each
// page in a bash of its own (every guide starts with a block that defines what it uses), page
// after page, against `npm run dev`. `npm run check:dev` (part of `npm test`) runs it on the
// server it started; `node scripts/check-readme.mjs` starts one of its own (scripts/dev-server.mjs),
// and `node scripts/check-readme.mjs http://localhost:8787 path/to/.dev.key [docs/ci.md…]` walks a
// running one (the pages named, else all of PAGES).
//
// What the walk holds a block to:
//   - a block runs unless the line before its fence is `<!-- no-run -->` (say why after a colon:
//     `<!-- no-run: starts the server -->`); new examples are walked without anyone asking, and a
//     page of docs/ that holds a runnable block but is not in PAGES fails the walk;
//   - bash runs each page with `set -eo pipefail` from the repository's root, so a command that
//     fails stops it (and names the command); what a page left running in the background is
//     stopped with it;
//   - every request the examples make reaches the server through a recording proxy (the pages'
//     `http://localhost:8787` is rewritten to it, `.dev.key` to the server's key file and
//     `local-admin-token` to .dev.vars' ADMIN_TOKEN): an answer of 400 or more fails the
//     command that got it, unless the command's comment names that status (`# 409 …`), and
//     then the command must get it;
//   - `npm run dev:issuer` (docs/ci.md) serves on a free port ($DEV_ISSUER_PORT), which the pages'
//     `http://127.0.0.1:8790` is rewritten to;
//   - the walk leaves no new or changed file in the repository (`git status`): scratch files
//     belong in a temporary directory, and no page's command edits a file of the repository.
// A command is what bash parses as one: the walk asks `bash -n` where each ends.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDevServer } from "./dev-server.mjs";
import { checker } from "./lib/check.mjs";
import { PACK_LOCK } from "./lib/pack-lock.mjs";
import { sparePort } from "./lib/ports.mjs";
import { runProcess } from "./lib/run-process.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

/** A page's runnable ```sh blocks, each with the line its fence is on. */
export function runnableBlocks(text) {
  const lines = text.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^```sh\s*$/.test(lines[i])) continue;
    let before = i - 1;
    while (before >= 0 && lines[before].trim() === "") before--;
    const skip = before >= 0 && /^<!--\s*no-run\b.*-->\s*$/.test(lines[before].trim());
    const body = [];
    let j = i + 1;
    for (; j < lines.length && !/^```\s*$/.test(lines[j]); j++) body.push(lines[j]);
    if (!skip) blocks.push({ line: i + 1, text: body.join("\n") });
    i = j;
  }
  return blocks;
}

/**
 * What SPLIT_COMMANDS reads: every block's text, each ended by a NUL. It answers each command of
 * each block as `<block>\t<first line in the block>\t<text>`, each ended by a NUL.
 *
 * A command ends at the first line where bash parses what has gathered as whole commands (`bash
 * -n`): a function, a loop, a heredoc is one command. A line ending in `\` continues (bash -n
 * takes the end of input for its end), and an open heredoc only warns, so it counts as open.
 * One bash asks every `bash -n` (forks of a small shell: ~6 times less CPU than one spawn from
 * Node a line, 360 of them, which was 21 s of `npm test`'s longest check on a loaded machine).
 */
const SPLIT_COMMANDS = String.raw`
complete() {
  [[ $1 == *\\ ]] && return 1
  local err
  err=$(bash -n 2>&1 <<<"$1")
  [[ ! $err =~ unexpected\ end\ of\ file|unexpected\ EOF|here-document ]]
}
b=0
while IFS= read -r -d '' block; do
  k=0 first=0 pending= open=0
  while IFS= read -r line; do
    if (( ! open )); then first=$k pending=$line open=1; else pending+=$'\n'$line; fi
    if complete "$pending"; then printf '%s\t%s\t%s\0' "$b" "$first" "$pending"; open=0; fi
    k=$((k + 1))
  done <<<"$block"
  (( open )) && printf '%s\t%s\t%s\0' "$b" "$first" "$pending"
  b=$((b + 1))
done`;

/**
 * Splits each block into the commands bash parses one by one (SPLIT_COMMANDS), in order: each
 * with the file line it starts on, blank ones left out. Asynchronous: check:dev starts it before
 * its server, and it takes seconds (a fork of bash for each line).
 */
export async function commands(blocks) {
  const input = blocks.map((block) => `${block.text}\0`).join("");
  const run = await runProcess("bash", ["-c", SPLIT_COMMANDS], { input });
  if (run.code !== 0) throw new Error(`splitting the pages' commands failed: ${run.stderr}`);
  const out = blocks.map(() => []);
  for (const record of run.stdout.split("\0").slice(0, -1)) {
    const [b, k, ...text] = record.split("\t");
    const block = blocks[Number(b)];
    const command = text.join("\t");
    if (command.trim() !== "") out[Number(b)].push({ line: block.line + 1 + Number(k), text: command });
  }
  return out;
}

/** The status a command's comment says it answers (`# 409 conflict`), or null. */
export function expectedStatus(text) {
  const m = /(?:^|\s)#\s*(?:→\s*)?([45]\d\d)\b/m.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * A proxy to `base` that records every answer's status under the step the walk is at, and calls
 * `onError(step, answer)` for each answer of 400 or more.
 */
async function recordingProxy(base, onError) {
  const target = new URL(base);
  const answers = [];
  let step = -1;
  const reached = { step: -1 };
  const server = createServer((req, res) => {
    const m = /^\/__readme_step\/(\d+)$/.exec(req.url ?? "");
    if (m) {
      step = Number(m[1]);
      reached.step = step;
      return res.writeHead(204).end();
    }
    const at = step;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        const recorded = { step: at, method: req.method, path: req.url, status: answer.statusCode };
        answers.push(recorded);
        if ((answer.statusCode ?? 0) >= 400) onError(at, recorded);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", (err) => {
      answers.push({ step: at, method: req.method, path: req.url, status: 502, error: String(err) });
      if (!res.headersSent) res.writeHead(502).end(String(err));
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    answers,
    reached: () => reached.step,
    close: () => server.close(),
  };
}

/** What `git status` lists, a line each: new files (`??`) and changed tracked ones (` M`, `D `…). */
const changedFiles = () =>
  new Set(
    execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: root, encoding: "utf8" })
      .split("\n")
      .filter((l) => l !== ""),
  );

/**
 * The pages walked, in this order, each in a bash of its own: README.md, then the guides of docs/
 * (README.md, "The guides"). Every other page of docs/ must hold no runnable block.
 */
export const PAGES = [
  "README.md",
  "docs/api.md",
  "docs/variables.md",
  "docs/releases.md",
  "docs/ci.md",
  "docs/operating.md",
  "docs/clients.md",
  "docs/development.md",
];

/** `npm run dev:issuer`'s default port, which the guides name (docs/ci.md); the walk uses a free one. */
const ISSUER_PORT = 8790;

/** What every page's bash runs first: step markers, and npm kept from the repository's install. */
function prelude(proxyUrl) {
  return [
    "set -eo pipefail",
    `__step() { command curl -s -o /dev/null "${proxyUrl}/__readme_step/$1" || true; }`,
    // The walk never reinstalls the repository's dependencies (they are what runs it), and packs
    // the client under the lock check:cli's pack takes (scripts/lib/pack-lock.mjs).
    `__root=$PWD; __lock=${JSON.stringify(PACK_LOCK)}`,
    `npm() {
  case "$1" in
    install | i | ci | add | update | uninstall | remove | rm)
      if [ "$PWD" = "$__root" ]; then echo "check:readme: not running npm $1 in the repository" >&2; return 1; fi ;;
    pack)
      until mkdir "$__lock" 2>/dev/null; do
        [ -n "$(find "$__lock" -maxdepth 0 -mmin +3 2>/dev/null)" ] && rmdir "$__lock"
        sleep 0.3
      done
      local rc=0; command npm "$@" || rc=$?; rmdir "$__lock"; return $rc ;;
  esac
  command npm "$@"
}`,
  ];
}

/** Runs `scriptFile` in a bash of its own; resolves with its exit code and output. */
function runBash(scriptFile, env, timeoutMs, onStart) {
  return new Promise((resolve) => {
    const child = spawn("bash", [scriptFile], {
      cwd: root,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    // The whole process group: what a page started in the background (`npm run dev:issuer &`) too.
    const stop = () => {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {}
    };
    onStart(stop);
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\n[the walk took over ${timeoutMs / 1000} s: stopped]\n`;
      stop();
    }, timeoutMs);
    let code;
    // Once bash is gone, whatever it left running in the background goes too, so that its output
    // pipes close.
    child.on("exit", (c) => {
      code = c;
      stop();
    });
    child.on("close", () => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * A key file for each page: a key of its own for the owner of the key in `keyFile` (the demo
 * organization's), made through the internal API as docs/api.md makes one, each the root of its
 * family, so that no page's requests count against another's window (API_CONTRACT §7: 100 a
 * minute for a key and the keys it made). A reader at a reader's pace never meets that limit; the
 * walk at a machine's, ~120 requests of one key within a minute on a quiet machine, did: 429 in
 * docs/clients.md, and in the checks after the walk that use the key. The pages read the file
 * where they say `.dev.key`; `keyFile` itself is left to the caller's requests. `revoke()` once
 * the walk is over.
 */
async function pageKeys({ base, keyFile, adminToken, pages, dir }) {
  // Again after a connection that fails before any answer: the walk's parse of the pages leaves
  // this process's connections to the server idle for seconds, and one that the server closes as
  // it is reused ends the fetch ("other side closed", seen once in CI). A request it carried was
  // not read; a retried key create could at worst make one more key.
  const call = async (url, init) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(url, init);
      } catch (err) {
        if (attempt === 3) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const key = readFileSync(keyFile, "utf8").trim();
  const current = await call(`${base}/v1/api-keys/current`, { headers: { "x-api-key": key } });
  if (!current.ok) throw new Error(`GET /v1/api-keys/current: ${current.status} ${await current.text()}`);
  const { org_id: org, account_id: account } = await current.json();
  const files = new Map();
  for (const page of pages) {
    const res = await call(`${base}/internal/v1/orgs/${org}/api-keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ account_id: account, created_by: account, name: `the walk of ${page}` }),
    });
    if (!res.ok) throw new Error(`a key for ${page}: ${res.status} ${await res.text()}`);
    const made = await res.json();
    const file = join(dir, `${page.replaceAll("/", "-")}.key`);
    writeFileSync(file, `${made.key}\n`);
    files.set(page, { file, id: made.id });
  }
  /** Revokes them, once the walk is over (a developer's own server keeps none of them live). */
  const revoke = () =>
    Promise.all(
      [...files.values()].map(({ id }) =>
        call(`${base}/internal/v1/api-keys/${id}`, {
          method: "DELETE",
          headers: { authorization: `Bearer ${adminToken}` },
        }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
  return { fileOf: (page) => files.get(page).file, revoke };
}

/**
 * The commands of `pages`' runnable blocks, in order, each with its page and line: what
 * `walkDocs` runs. It needs no server, so a caller may start it before its server (`prepared`).
 */
export async function walkSteps(pages = PAGES) {
  const blocks = pages.flatMap((page) =>
    runnableBlocks(readFileSync(join(root, page), "utf8")).map((block) => ({ ...block, page })),
  );
  return (await commands(blocks)).flatMap((found, i) => found.map((c) => ({ ...c, page: blocks[i].page })));
}

/**
 * Walks `pages` (README.md and the guides) against the server at `base` whose key is in `keyFile`:
 * each page's sh blocks in a bash of its own, page after page; reports through `check`. Resolves
 * when the walk is over. `prepared`: `walkSteps(pages)`, if the caller started it already.
 */
export async function walkDocs({ base, keyFile, check, pages = PAGES, prepared, timeoutMs = 600_000 }) {
  const adminToken =
    readFileSync(join(root, ".dev.vars"), "utf8")
      .match(/^ADMIN_TOKEN=(.*)$/m)?.[1]
      ?.trim() ?? "local-admin-token";
  const steps = await (prepared ?? walkSteps(pages));
  for (const page of pages) {
    const count = steps.filter((s) => s.page === page).length;
    check(count > 0, `${page} has runnable sh blocks (${count} commands)`);
  }
  const unwalked = readdirSync(join(root, "docs"))
    .map((f) => `docs/${f}`)
    .filter((f) => f.endsWith(".md") && !pages.includes(f) && !PAGES.includes(f))
    .filter((f) => runnableBlocks(readFileSync(join(root, f), "utf8")).length > 0);
  check(
    unwalked.length === 0,
    "every page of docs/ with a runnable sh block is walked (a block that cannot run says <!-- no-run: why -->)",
    unwalked.join(", "),
  );
  // An error answer no comment expects stops the page there: what follows would only run on the
  // `undefined` it left (an id read off an error body) and bury the cause.
  let stop = () => {};
  const proxy = await recordingProxy(base, (step, answer) => {
    const expected = steps[step] ? expectedStatus(steps[step].text) : null;
    if (answer.status !== expected) stop();
  });
  const issuerPort = await sparePort();
  const scratch = mkdtempSync(join(tmpdir(), "check-readme-"));
  const keys = await pageKeys({ base, keyFile, adminToken, pages, dir: scratch });
  const rewrite = (text, page) =>
    text
      .replaceAll("http://localhost:8787", proxy.url)
      .replaceAll(`http://127.0.0.1:${ISSUER_PORT}`, `http://127.0.0.1:${issuerPort}`)
      .replace(/(^|[\s(])\.dev\.key\b/g, `$1${keys.fileOf(page)}`)
      .replaceAll("local-admin-token", adminToken);
  const before = changedFiles();

  const env = { ...process.env, npm_config_prefer_offline: "true", npm_config_fund: "false" };
  env.npm_config_audit = "false";
  env.XDG_CONFIG_HOME = join(scratch, "config");
  // `npm run dev:issuer` on a port of the walk's own, so a developer's issuer is left alone.
  env.DEV_ISSUER_PORT = String(issuerPort);
  // The Node that runs this script first on PATH, as `. scripts/use-node.sh` makes it for a reader.
  env.PATH = `${dirname(process.execPath)}${delimiter}${env.PATH ?? ""}`;
  for (const name of Object.keys(env)) if (name.startsWith("DEPLOY_PLATFORM_")) delete env[name];
  const where = (i) =>
    steps[i] ? `${steps[i].page}:${steps[i].line}: ${steps[i].text.split("\n")[0]}` : "the end";
  const tail = (text) => text.split("\n").slice(-40).join("\n");
  const reachedOf = new Map();
  let log = "";
  for (const page of pages) {
    const first = steps.findIndex((s) => s.page === page);
    if (first === -1) continue;
    const own = steps.map((s, i) => ({ ...s, i })).filter((s) => s.page === page);
    const script = [
      ...prelude(proxy.url),
      ...own.flatMap((s) => [`__step ${s.i}`, `echo "$ # ${page}:${s.line}"`, rewrite(s.text, page)]),
      `__step ${own[own.length - 1].i + 1}`,
    ].join("\n");
    const scriptFile = join(scratch, `${page.replaceAll("/", "-")}.sh`);
    writeFileSync(scriptFile, `${script}\n`);
    const started = Date.now();
    const result = await runBash(scriptFile, env, timeoutMs, (s) => {
      stop = s;
    });
    log += result.output;
    // The command that stopped the page: the last one whose step marker arrived.
    const reached = Math.min(proxy.reached(), own[own.length - 1].i);
    reachedOf.set(page, reached);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    check(
      result.code === 0,
      `every command of ${page}'s sh blocks exits 0, in order, in one bash (${own.length} commands, ${seconds} s)`,
      `exit ${result.code}; the last step reached: ${where(reached)}\n${tail(result.output)}`,
    );
  }
  proxy.close();
  const revoked = await keys.revoke();
  check(
    revoked.every((status) => status >= 200 && status < 300),
    "the walk's own keys, one a page, are revoked once it is over",
    revoked.join(", "),
  );
  // To read what a reader would see: CHECK_README_LOG=walk.log node scripts/check-readme.mjs
  if (process.env.CHECK_README_LOG) writeFileSync(process.env.CHECK_README_LOG, log);
  const wrong = [];
  steps.forEach((s, i) => {
    const got = proxy.answers.filter((a) => a.step === i);
    const errors = got.filter((a) => a.status >= 400);
    const expected = expectedStatus(s.text);
    if (expected === null) {
      for (const e of errors) wrong.push(`${where(i)}\n    got ${e.status} for ${e.method} ${e.path}`);
    } else if (i <= (reachedOf.get(s.page) ?? -1)) {
      const others = errors.filter((e) => e.status !== expected);
      if (!got.some((a) => a.status === expected) || others.length > 0)
        wrong.push(
          `${where(i)}\n    its comment says ${expected}; got ${got.map((a) => a.status).join(", ") || "no request"}`,
        );
    }
  });
  check(wrong.length === 0, "no answer is an error where the page expects none", `\n  ${wrong.join("\n  ")}`);
  const left = [...changedFiles()].filter((f) => !before.has(f));
  check(left.length === 0, "the walk leaves no new or changed file in the repository", left.join(", "));
  rmSync(scratch, { recursive: true, force: true });
  return { output: log };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { check, fail, done } = checker("check:readme");
  // [base [keyFile]] [pages…]: a server to walk against (else one of its own), and which pages.
  const args = process.argv.slice(2);
  const pages = args.filter((a) => a.endsWith(".md"));
  const [givenBase, givenKeyFile] = args.filter((a) => !a.endsWith(".md"));
  const chosen = pages.length > 0 ? pages : PAGES;
  let server;
  const dir = mkdtempSync(join(tmpdir(), "check-readme-dev-"));
  try {
    if (givenBase)
      await walkDocs({
        base: givenBase,
        keyFile: givenKeyFile ?? join(root, ".dev.key"),
        check,
        pages: chosen,
      });
    else {
      server = await startDevServer(dir);
      await walkDocs({ base: server.base, keyFile: server.keyFile, check, pages: chosen });
    }
  } catch (err) {
    fail(err);
  } finally {
    server?.stop();
    await new Promise((r) => setTimeout(r, 500));
    rmSync(dir, { recursive: true, force: true });
  }
  done(
    `${chosen.join(", ")}: the examples run as written, in order.`,
    server ? ` The server's output:\n${server.log()}` : "",
  );
}
