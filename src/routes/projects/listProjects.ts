import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { listQuery } from "../../openapi/lists";
import { listProjects } from "../../services/projects/reads";
import { projectListSchema } from "./schema";

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/projects",
    operationId: "listProjects",
    tags: ["Projects"],
    summary: "List the projects of your organization that you may see",
    description:
      "Organization owners and admins see every project of the organization; other members see the " +
      "projects they are members of. Keyset-paginated: pass `next_page` as `after` for the next page.",
    request: { query: listQuery() },
    responses: { 200: jsonContent(projectListSchema(), "A page of projects.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listProjects(callerContext(c), page), 200);
  });
}
