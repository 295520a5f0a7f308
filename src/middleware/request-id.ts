import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../http/app-env";
import { newId } from "../lib/ids";

const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming x-request-id, else make a new one; every response carries it. */
export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const incoming = c.req.header("x-request-id");
  const id = incoming && INCOMING_ID.test(incoming) ? incoming : newId();
  c.set("requestId", id);
  await next();
  c.res.headers.set("x-request-id", id);
});
