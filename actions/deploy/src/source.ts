/**
 * The default `data.source` of a deployment the action creates: the workflow's commit, as the
 * `git` source of API_CONTRACT §3 (SPEC.md "Deployment"), from the variables every GitHub Actions
 * step has and the event's payload (`GITHUB_EVENT_PATH`).
 *
 * The schema requires some fields a workflow cannot know; they get these values:
 *   - `installation_id`: `""`. It is a GitHub App's installation; a workflow run is none.
 *   - `commit.message`, `commit.author`, `commit.committer`: from the payload's `head_commit` (a
 *     push); other events carry none for `GITHUB_SHA` (a pull request's is a merge commit GitHub
 *     made), so the message is `""` and the people `{}` (their fields are all optional).
 *   - `repo_id`: `GITHUB_REPOSITORY_ID`, `""` on a runner too old to set it.
 * `pull_request` is the pull request's number, for the events that have one; absent otherwise.
 */
import { readFileSync } from "node:fs";
import type { DeploymentCreate } from "../../../clients/typescript/src/index.js";
import { InputError } from "./inputs.js";

type GitSource = NonNullable<NonNullable<DeploymentCreate["data"]["source"]>["git"]>;
type Person = GitSource["commit"]["author"];
type Env = Record<string, string | undefined>;

type Payload = {
  head_commit?: {
    id?: string;
    message?: string;
    author?: { name?: string; email?: string; username?: string };
    committer?: { name?: string; email?: string; username?: string };
  } | null;
  pull_request?: { number?: number };
  number?: number;
};

function payload(env: Env): Payload {
  if (!env.GITHUB_EVENT_PATH) return {};
  try {
    const parsed = JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, "utf8")) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Payload) : {};
  } catch {
    return {};
  }
}

function person(p: { name?: string; email?: string; username?: string } | undefined): Person {
  if (!p) return {};
  return {
    ...(p.name ? { name: p.name } : {}),
    ...(p.email ? { email: p.email } : {}),
    ...(p.username ? { login: p.username } : {}),
  };
}

export function workflowSource(env: Env = process.env): { git: GitSource } {
  const sha = env.GITHUB_SHA;
  const repository = env.GITHUB_REPOSITORY;
  if (!sha || !repository?.includes("/"))
    throw new InputError(
      "no source: GITHUB_SHA and GITHUB_REPOSITORY are not set (not a GitHub Actions run?); give the source input",
    );
  const [owner = "", repo = ""] = repository.split("/", 2);
  const event = payload(env);
  // head_commit describes GITHUB_SHA only when it is that commit (a push).
  const head = event.head_commit && event.head_commit.id === sha ? event.head_commit : undefined;
  const number = event.pull_request?.number ?? (event.pull_request ? event.number : undefined);
  return {
    git: {
      provider: "github",
      owner: env.GITHUB_REPOSITORY_OWNER || owner,
      repo,
      repo_id: env.GITHUB_REPOSITORY_ID ?? "",
      ref: env.GITHUB_REF ?? "",
      installation_id: "",
      ...(number !== undefined ? { pull_request: String(number) } : {}),
      commit: {
        sha,
        message: head?.message ?? "",
        author: person(head?.author),
        committer: person(head?.committer),
      },
    },
  };
}
