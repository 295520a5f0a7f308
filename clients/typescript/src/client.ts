import createClient, { type Client } from "openapi-fetch";
import { type RetryOptions, retryingFetch } from "./retry.js";
import type { paths as Paths } from "./schema.js";

export type ClientOptions = RetryOptions & {
  /** e.g. `http://localhost:8787`; a trailing `/v1` is taken off (the paths start with it). */
  baseUrl: string;
};

export type DeployClient = Client<Paths>;

/** The typed client: `client.GET("/v1/projects", { params: { query: { limit: 20 } } })`. */
export function createDeployClient(options: ClientOptions): DeployClient {
  return createClient<Paths>({ baseUrl: serviceBase(options.baseUrl), fetch: retryingFetch(options) });
}

/**
 * The service's root from a URL given for it: `http://localhost:8787/v1/` → `http://localhost:8787`.
 * Every typed path begins with `/v1`, so a base that ends with it would ask for `/v1/v1/…`.
 */
export function serviceBase(url: string): string {
  return url.replace(/\/+$/, "").replace(/\/v1$/, "");
}
