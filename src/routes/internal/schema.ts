/**
 * The internal API's shared pieces (API_CONTRACT §9): the path parameters and bodies several
 * resources use. Each resource's own bodies sit in its folder.
 */
import { z } from "@hono/zod-openapi";
import { freeString, idParams } from "../../openapi/primitives";

export const OrgIdParams = idParams("org_id");
export const ProjectIdParams = idParams("project_id");
export const EnvironmentIdParams = idParams("environment_id");
export const StackIdParams = idParams("stack_id");
export const IdParams = idParams("id");

/** An organization's body: its name, 1–100 characters (API_CONTRACT §3). */
export const OrgNameBody = z.strictObject({ name: z.string().min(1).max(100) });

/** The body of an environment or a component: a name, a plain string (API_CONTRACT §9). */
export const NameBody = z.strictObject({ name: freeString() });
