import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../http/app-env";
import { registerCreateApiKey } from "./create";
import { registerGetCurrentApiKey } from "./current";
import { registerGetApiKey } from "./get";
import { registerListApiKeys } from "./list";
import { registerRevokeApiKey } from "./revoke";

export function registerApiKeyRoutes(app: OpenAPIHono<AppEnv>) {
  // `current` before `{id}`: routes match in the order they are registered.
  registerGetCurrentApiKey(app);
  registerListApiKeys(app);
  registerCreateApiKey(app);
  registerGetApiKey(app);
  registerRevokeApiKey(app);
}
