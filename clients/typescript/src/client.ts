import createClient, { type Client } from "openapi-fetch";
import { type RetryOptions, retryingFetch } from "./retry.js";
import type { paths as Paths } from "./schema.js";

export type ClientOptions = RetryOptions & {
  /** e.g. `http://localhost:8787`. */
  baseUrl: string;
};

export type DeployClient = Client<Paths>;

/** The typed client: `client.GET("/v1/projects", { params: { query: { limit: 20 } } })`. */
export function createDeployClient(options: ClientOptions): DeployClient {
  return createClient<Paths>({ baseUrl: options.baseUrl, fetch: retryingFetch(options) });
}
