/**
 * `login --oidc`: CI trades its own short-lived ID token for a short-lived API key (API_CONTRACT
 * §27) and hands it to the commands after it without printing it: a file only its owner may read,
 * which every command reads when no key is given otherwise (context.ts), and on GitHub Actions
 * `$GITHUB_ENV` too, the key masked in the log first.
 *
 * `POST /v1/oidc/token` takes no API key: `exchangeOidcToken`, the typed client's keyless and
 * unretried call of it.
 */
import type { Argv } from "yargs";
import { exchangeOidcToken } from "../client.js";
import { type Context, type GlobalArgs, type KeylessCommand, keyFilePath } from "./context.js";
import { type Io, printJson, UsageError } from "./io.js";

type LoginArgs = GlobalArgs & {
  oidc?: boolean;
  trust?: string;
  audience?: string;
  idTokenFile?: string;
  keyFile?: string;
};

export function registerLogin(program: Argv, ctx: Context): void {
  program.command<LoginArgs>(
    "login",
    "CI: trade the run's OpenID Connect ID token for a short-lived API key that later commands use (never printed)",
    (y) =>
      y
        .option("oidc", { type: "boolean", describe: "Log in with the CI's ID token (the only way for now)" })
        .option("trust", { type: "string", describe: "The OIDC trust's ID (an org admin made it)" })
        .option("audience", {
          type: "string",
          describe: "The trust's audience: the `aud` to request the ID token for",
        })
        .option("id-token-file", {
          type: "string",
          describe: "A file holding the ID token (default on GitHub Actions: requested from the runner)",
        })
        .option("key-file", {
          type: "string",
          describe:
            "Where to write the key (mode 600) [env DEPLOY_PLATFORM_API_KEY_FILE; default ~/.config/deploy-platform/api-key]",
        }),
    (args) => ctx.runKeyless(args, (command) => login(command, args, ctx.userAgent)),
  );
}

async function login({ base, json, io }: KeylessCommand, args: LoginArgs, userAgent: string): Promise<void> {
  if (!args.oidc)
    throw new UsageError("login takes --oidc (with --trust ID and --audience AUD): the CI's ID token");
  if (!args.trust)
    throw new UsageError("login --oidc needs --trust ID: the trust an org admin made for this CI");
  const keyFile = args.keyFile ?? keyFilePath(io.env);
  const githubEnv = io.env.GITHUB_ACTIONS === "true" ? io.env.GITHUB_ENV : undefined;
  if (keyFile === undefined && githubEnv === undefined)
    throw new UsageError("nowhere to keep the key: pass --key-file or set DEPLOY_PLATFORM_API_KEY_FILE");
  const token = await idToken(io, args);

  const issued = await exchangeOidcToken(
    { baseUrl: base, headers: { "user-agent": userAgent }, fetch: io.fetch, signal: io.signal },
    { trust_id: args.trust, token },
  );

  // Masked before anything else could print it; then handed on without being printed.
  if (io.env.GITHUB_ACTIONS === "true") io.stdout.write(`::add-mask::${issued.key}\n`);
  if (githubEnv) await io.appendFile(githubEnv, `DEPLOY_PLATFORM_API_KEY=${issued.key}\n`);
  if (keyFile !== undefined) await io.writePrivateFile(keyFile, `${issued.key}\n`, { makeDirectory: true });

  const { key: _shownOnce, ...record } = issued;
  const where = [keyFile, githubEnv ? "$GITHUB_ENV" : undefined].filter((w) => w !== undefined);
  if (json) printJson(io, { ...record, key_file: keyFile ?? null, github_env: githubEnv !== undefined });
  else
    io.stdout.write(
      `logged in: key ${issued.id}${issued.account_id ? ` of account ${issued.account_id}` : ""}, ` +
        `expires ${issued.expires_at ?? "never"}; kept in ${where.join(" and ")}\n`,
    );
  if (io.env.DEPLOY_PLATFORM_API_KEY && keyFile !== undefined && !githubEnv)
    io.stderr.write(
      `note: DEPLOY_PLATFORM_API_KEY is set, and wins over ${keyFile} in this shell: unset it to use the new key\n`,
    );
}

/** The run's ID token: from `--id-token-file`, else asked of the GitHub Actions runner. */
async function idToken(io: Io, args: LoginArgs): Promise<string> {
  if (args.idTokenFile !== undefined) {
    const token = (await io.readFile(args.idTokenFile)).trim();
    if (token === "") throw new UsageError(`${args.idTokenFile} is empty: no ID token in it`);
    return token;
  }
  const url = io.env.ACTIONS_ID_TOKEN_REQUEST_URL;
  const bearer = io.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN;
  if (!url || !bearer)
    throw new UsageError(
      "no ID token: on GitHub Actions give the job `permissions: id-token: write`; elsewhere pass --id-token-file",
    );
  if (!args.audience)
    throw new UsageError(
      "login --oidc needs --audience: the trust's audience, which the ID token must carry",
    );
  let request: URL;
  try {
    request = new URL(url);
  } catch {
    throw new UsageError("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL");
  }
  request.searchParams.set("audience", args.audience);
  const fetch = io.fetch ?? globalThis.fetch;
  let res: Response;
  try {
    res = await fetch(request, {
      headers: { authorization: `Bearer ${bearer}`, accept: "application/json" },
      signal: io.signal,
    });
  } catch (err) {
    if (io.signal?.aborted) throw err;
    const reason =
      err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : err;
    throw new UsageError(
      `cannot get an ID token from the GitHub Actions runner (${request.host}): ${reason}`,
    );
  }
  const answer = (await res.json().catch(() => null)) as { value?: unknown } | null;
  if (!res.ok || typeof answer?.value !== "string")
    throw new UsageError(
      `the GitHub Actions runner gave no ID token (HTTP ${res.status}): does the job have \`permissions: id-token: write\`?`,
    );
  return answer.value;
}
