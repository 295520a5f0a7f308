import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { ORG_ROLES } from "../../db/schema";
import {
  bodylessGuard,
  errorResponses,
  IdSchema,
  idParams,
  TemplateIdSchema,
  TimestampSchema,
} from "../../http/openapi";

/** An internal route: validated like the public ones (a body it does not declare is refused), never published in /openapi.json. */
export function defineInternalRoute<R extends RouteConfig>(config: R) {
  return createRoute({
    ...config,
    middleware: bodylessGuard(config),
    hide: true,
    responses: { ...errorResponses, ...config.responses },
  } as R & { hide: true });
}

export const OrgIdParams = idParams("org_id");
export const ProjectIdParams = idParams("project_id");
export const EnvironmentIdParams = idParams("environment_id");
export const KeyIdParams = idParams("id");

export const NameBody = z.strictObject({ name: z.string().min(1).max(100) });

const nullableString = (max: number) => z.string().max(max).nullable().optional();

export const AccountCreateBody = z.strictObject({
  name: z.string().min(1).max(100),
  display_name: nullableString(100),
  avatar: nullableString(2048),
  profile: z
    .strictObject({
      bio: nullableString(1000),
      github: nullableString(100),
      location: nullableString(200),
      twitter: nullableString(100),
      website: nullableString(2048),
    })
    .partial()
    .nullable()
    .optional(),
});

export const OrgMemberBody = z.strictObject({ account_id: IdSchema, role: z.enum(ORG_ROLES) });

export const ApiKeyCreateBody = z.strictObject({
  account_id: IdSchema,
  created_by: IdSchema,
  name: z.string().max(100).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
});

export const StackCreateBody = z.strictObject({
  name: z.string().min(1).max(100),
  template_id: TemplateIdSchema.optional(),
});

export const AnyRecord = z.record(z.string(), z.unknown());
export { TimestampSchema };
