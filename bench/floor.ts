/**
 * What the floor Workers share (bench/minimal, bench/io, bench/ladder): a project's zod schema and the
 * zod-openapi route that reads one. bench/lib.mjs copies it beside each Worker's snapshot; the I/O of
 * the floors that have bindings is ./floor-io.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";

export const Project = z.object({
  id: z.string(),
  org_id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  icon: z.string().nullable(),
  repo_id: z.string().nullable(),
  default_environment_id: z.string(),
  connection_status: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ProjectRecord = z.infer<typeof Project>;

/** `GET <path>/{id}`: a project by its id, the D1 bookmark to start from in a header. */
export const readRoute = (path: string) =>
  createRoute({
    method: "get",
    path: `${path}/{id}`,
    request: {
      params: z.object({ id: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{22}$/) }),
      headers: z.object({ "x-d1-bookmark": z.string().optional() }),
    },
    responses: {
      200: { content: { "application/json": { schema: Project } }, description: "The project." },
      401: { description: "No API key." },
      404: { description: "No such project." },
    },
  });
