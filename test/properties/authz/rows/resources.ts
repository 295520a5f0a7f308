/** Stack resource routes: every one is a read (API_CONTRACT §5, `viewer` or above). */
import { createResource, createStack } from "../../../helpers/factories";
import { type MatrixRoute, perWorld, readRows } from "../types";

type Target = { environmentId: string; stackId: string; resourceId: string };

/** A stack with one resource in the world's project, made once per World (reads change nothing). */
const target = perWorld(async (world): Promise<Target> => {
  const environmentId = world.project.default_environment_id;
  const stack = await createStack(environmentId);
  const resource = await createResource(stack.id);
  return { environmentId, stackId: stack.id, resourceId: resource.id };
});

const read = readRows(target);

export const routes: MatrixRoute[] = [
  read("GET /v1/resources/{id}", (t) => `/v1/resources/${t.resourceId}`),
  read(
    "GET /v1/stacks/{stack_id}/resources/{id}",
    (t) => `/v1/stacks/${t.stackId}/resources/${t.resourceId}`,
  ),
  read(
    "GET /v1/environments/{environment_id}/resources/{id}",
    (t) => `/v1/environments/${t.environmentId}/resources/${t.resourceId}`,
  ),
  read("GET /v1/stacks/{stack_id}/resources", (t) => `/v1/stacks/${t.stackId}/resources`),
  read(
    "GET /v1/environments/{environment_id}/resources",
    (t) => `/v1/environments/${t.environmentId}/resources`,
  ),
];
