import { createDeployClient, type DeployClient } from "../client.js";
import { type Io, notice, reportError, UsageError } from "./io.js";

export type GlobalArgs = { url?: string; apiKey?: string; json?: boolean };

export type Command = { client: DeployClient; json: boolean; io: Io };

/** What a command that needs no API key gets (`login`): the service's root, checked. */
export type KeylessCommand = { base: string; json: boolean; io: Io };

/**
 * Where the key `login` writes lives, and where a command looks for a key when neither
 * `--api-key` nor `DEPLOY_PLATFORM_API_KEY` gives one: `DEPLOY_PLATFORM_API_KEY_FILE`, else
 * `$XDG_CONFIG_HOME/deploy-platform/api-key` (`~/.config/…`).
 */
export function keyFilePath(env: Io["env"]): string | undefined {
  if (env.DEPLOY_PLATFORM_API_KEY_FILE) return env.DEPLOY_PLATFORM_API_KEY_FILE;
  const config = env.XDG_CONFIG_HOME || (env.HOME ? `${env.HOME}/.config` : undefined);
  return config ? `${config}/deploy-platform/api-key` : undefined;
}

/** Shared by every command: the configuration, the client, and the exit code. */
export class Context {
  exitCode = 0;
  constructor(
    readonly io: Io,
    readonly version: string,
  ) {}

  /** The service's root the flags and environment name; a usage error when they name none. */
  base(args: GlobalArgs): string {
    const url = args.url ?? this.io.env.DEPLOY_PLATFORM_URL;
    if (!url) throw new UsageError("no API URL: set DEPLOY_PLATFORM_URL or pass --url");
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`the API URL ${JSON.stringify(url)} is not a URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new UsageError(`the API URL must be http:// or https://, not ${parsed.protocol}`);
    return parsed.href.replace(/\/$/, "");
  }

  /** The key: `--api-key`, else `DEPLOY_PLATFORM_API_KEY`, else the key file `login` wrote. */
  async apiKey(args: GlobalArgs): Promise<string> {
    const given = args.apiKey ?? this.io.env.DEPLOY_PLATFORM_API_KEY;
    if (given) return given;
    const file = keyFilePath(this.io.env);
    const stored = file === undefined ? undefined : (await this.io.readFileIfExists(file))?.trim();
    if (stored) return stored;
    throw new UsageError(
      "no API key: set DEPLOY_PLATFORM_API_KEY, pass --api-key, or run `deploy-platform login --oidc` in CI",
    );
  }

  /** The user agent every request of this CLI sends. */
  get userAgent(): string {
    return `deploy-platform-cli/${this.version}`;
  }

  /** The client the flags and environment ask for; a usage error when they do not say enough. */
  async client(args: GlobalArgs): Promise<DeployClient> {
    const baseUrl = this.base(args);
    return createDeployClient({
      baseUrl,
      apiKey: await this.apiKey(args),
      fetch: this.io.fetch,
      sleep: this.io.sleep,
      headers: { "user-agent": this.userAgent },
      onRetry: ({ response, delayMs }) => {
        // A Retry-After may be a minute: say why nothing happens meanwhile.
        if (response?.status === 429)
          notice(this.io, args.json === true, "rate", `rate limited; retrying in ${seconds(delayMs)} s`);
      },
    });
  }

  /** Runs a command body; a number it returns is the exit code (else 0), a throw is reported. */
  async run(args: GlobalArgs, body: (command: Command) => Promise<unknown>): Promise<void> {
    await this.guard(args, async (json) => body({ client: await this.client(args), json, io: this.io }));
  }

  /** `run` for a command that calls the API without a key. */
  async runKeyless(args: GlobalArgs, body: (command: KeylessCommand) => Promise<unknown>): Promise<void> {
    await this.guard(args, (json) => body({ base: this.base(args), json, io: this.io }));
  }

  private async guard(args: GlobalArgs, body: (json: boolean) => Promise<unknown>): Promise<void> {
    const json = args.json === true;
    try {
      const code = await body(json);
      this.exitCode = typeof code === "number" ? code : 0;
    } catch (err) {
      if (this.io.signal?.aborted) {
        this.io.stderr.write("interrupted\n");
        this.exitCode = 130;
      } else this.exitCode = reportError(this.io, json, err);
    }
  }
}

/** `54`, `1.5`, `0.3`: whole seconds as they are, else one decimal. */
const seconds = (ms: number): string => (ms % 1000 === 0 ? String(ms / 1000) : (ms / 1000).toFixed(1));
