#!/usr/bin/env node
// `node scripts/check-main-head.mjs` (the deploy jobs, before `npm ci` and any credential): refuses to
// deploy a commit that is no longer the head of main.
//
// Each deploy job has its own concurrency group (deploy.yml), so a push's CI no longer waits for
// the previous push's deployment. An older run can then reach a deploy job after a newer one (its
// CI was slower, or it was re-run, or its production approval came later) and would put older
// code back over newer. A run that is not main's head deploys nothing: the run of the newer
// commit deploys it, with its migrations. Needs GITHUB_REPOSITORY, GITHUB_SHA and GITHUB_TOKEN
// (a token that may read the repository); GITHUB_API_URL when not api.github.com. Any doubt (the
// API unreachable, an unexpected answer) also refuses: a deploy is never a guess.
import { fileURLToPath } from "node:url";

/** The commit main's head points at, from GitHub's "get a reference" endpoint. */
export async function mainHead({ apiUrl = "https://api.github.com", repository, token }) {
  const res = await fetch(`${apiUrl}/repos/${repository}/git/ref/heads/main`, {
    headers: {
      accept: "application/vnd.github+json",
      authorization: `Bearer ${token}`,
      "x-github-api-version": "2022-11-28",
    },
  });
  const body = await res.json().catch(() => undefined);
  const sha = body?.object?.sha;
  if (!res.ok || typeof sha !== "string") {
    throw new Error(`GitHub answered ${res.status} for refs/heads/main: ${JSON.stringify(body)}`);
  }
  return sha;
}

/** Whether `sha` may deploy: an exit code and the line to print. */
export async function checkMainHead(env) {
  const { GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_TOKEN } = env;
  if (!GITHUB_REPOSITORY || !GITHUB_SHA || !GITHUB_TOKEN) {
    return { code: 1, line: "GITHUB_REPOSITORY, GITHUB_SHA and GITHUB_TOKEN must be set" };
  }
  let head;
  try {
    head = await mainHead({ apiUrl: GITHUB_API_URL, repository: GITHUB_REPOSITORY, token: GITHUB_TOKEN });
  } catch (err) {
    return { code: 1, line: `cannot tell whether ${GITHUB_SHA} is main's head: ${err.message}` };
  }
  if (head !== GITHUB_SHA) {
    return {
      code: 1,
      line: `main has moved on to ${head}: this run (${GITHUB_SHA}) deploys nothing; the run of ${head} deploys it`,
    };
  }
  return { code: 0, line: `${GITHUB_SHA} is main's head` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { code, line } = await checkMainHead(process.env);
  console.log(code === 0 || !process.env.GITHUB_ACTIONS ? line : `::error::${line}`);
  process.exit(code);
}
