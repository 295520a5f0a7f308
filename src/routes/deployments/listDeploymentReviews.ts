import type { OpenAPIHono } from "@hono/zod-openapi";
import { pageRequest } from "../../db/pagination";
import type { AppEnv } from "../../http/app-env";
import { callerContext } from "../../middleware/context";
import { defineRoute, jsonContent } from "../../openapi/define-route";
import { envelope, listQuery } from "../../openapi/lists";
import { ReviewSchema } from "../../schemas/protection";
import { listDeploymentReviews } from "../../services/deployments/reviews";
import { DeploymentParams } from "./schema";

const ReviewListSchema = envelope(ReviewSchema, "DeploymentReviewList");

export function register(app: OpenAPIHono<AppEnv>) {
  const route = defineRoute({
    method: "get",
    path: "/v1/deployments/{id}/reviews",
    operationId: "listDeploymentReviews",
    tags: ["Deployments"],
    summary: "List a deployment's reviews",
    description: "Keyset-paginated by `created_at`. Project role `viewer` or above.",
    request: { params: DeploymentParams, query: listQuery() },
    responses: { 200: jsonContent(ReviewListSchema, "A page of reviews.") },
  });
  app.openapi(route, async (c) => {
    const page = pageRequest(c.req.valid("query"));
    return c.json(await listDeploymentReviews(callerContext(c), c.req.valid("param").id, page), 200);
  });
}
