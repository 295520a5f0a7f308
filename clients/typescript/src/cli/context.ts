import { createDeployClient, type DeployClient } from "../client.js";
import { type Io, notice, reportError, UsageError } from "./io.js";

export type GlobalArgs = { url?: string; apiKey?: string; json?: boolean };

export type Command = { client: DeployClient; json: boolean; io: Io };

/** Shared by every command: the configuration, the client, and the exit code. */
export class Context {
  exitCode = 0;
  constructor(
    readonly io: Io,
    readonly version: string,
  ) {}

  /** The client the flags and environment ask for; a usage error when they do not say enough. */
  client(args: GlobalArgs): DeployClient {
    const url = args.url ?? this.io.env.DEPLOY_PLATFORM_URL;
    const apiKey = args.apiKey ?? this.io.env.DEPLOY_PLATFORM_API_KEY;
    if (!url) throw new UsageError("no API URL: set DEPLOY_PLATFORM_URL or pass --url");
    if (!apiKey) throw new UsageError("no API key: set DEPLOY_PLATFORM_API_KEY or pass --api-key");
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`the API URL ${JSON.stringify(url)} is not a URL`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
      throw new UsageError(`the API URL must be http:// or https://, not ${parsed.protocol}`);
    return createDeployClient({
      baseUrl: parsed.href.replace(/\/$/, ""),
      apiKey,
      fetch: this.io.fetch,
      sleep: this.io.sleep,
      headers: { "user-agent": `deploy-platform-cli/${this.version}` },
      onRetry: ({ response, delayMs }) => {
        // A Retry-After may be a minute: say why nothing happens meanwhile.
        if (response?.status === 429)
          notice(this.io, args.json === true, "rate", `rate limited; retrying in ${seconds(delayMs)} s`);
      },
    });
  }

  /** Runs a command body; a number it returns is the exit code (else 0), a throw is reported. */
  async run(args: GlobalArgs, body: (command: Command) => Promise<unknown>): Promise<void> {
    const json = args.json === true;
    try {
      const code = await body({ client: this.client(args), json, io: this.io });
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
