/**
 * The tools that read: a project's environments and deployments, a deployment with the end of its
 * timeline, a wait for one to finish. Each one or a few GETs of the API.
 */
import * as z from "zod";
import { DEPLOYMENT_STATUSES } from "../../db/schema";
import { DeploymentSchema } from "../../schemas/deployment";
import { ProjectSchema } from "../../schemas/project";
import { ProtectionSchema } from "../../schemas/protection";
import { MAX_TIMELINE_ENTRIES, TimelineEntrySchema } from "../../schemas/timeline";
import { EnvironmentSchema } from "../../schemas/topology";
import type { Api } from "../api";
import { after, id, limit, page, READ, type Tool, tool } from "./define";

const FINAL = new Set(["succeeded", "failed", "cancelled"]);

type Page<T> = { data: T[]; has_more: boolean; next_page?: string };
type Entry = z.output<typeof TimelineEntrySchema>;

/** A timeline's page size at most (API_CONTRACT §19). */
const TIMELINE_PAGE = 1000;

/**
 * The last `count` entries of a deployment's timeline, and its length. The timeline is read forward
 * only (`after_seq`), but its `seq` are 1, 2, 3… without gaps, so one entry after `x` says the
 * timeline is longer than `x`: a timeline of one page costs one call; a longer one a binary search
 * for its end (a timeline holds at most 100,000 entries: at most 7 one-entry calls), then one page.
 */
async function timelineTail(api: Api, deploymentId: string, count: number) {
  const path = `/v1/deployments/${deploymentId}/timeline`;
  const read = (afterSeq: number, size: number) =>
    api.call<Page<Entry>>("GET", path, { query: { after_seq: afterSeq, limit: size } });
  let last = await read(0, TIMELINE_PAGE);
  if (last.has_more) {
    // The end lies in (low, high]: the last entry read is there, and no timeline is longer than the cap.
    let low = last.data.at(-1)?.seq ?? 0;
    let high = MAX_TIMELINE_ENTRIES;
    while (high - low > TIMELINE_PAGE - count) {
      const middle = Math.floor((low + high) / 2);
      const probe = await read(middle, 1);
      if (probe.data.length > 0) low = middle + 1;
      else high = middle;
    }
    last = await read(Math.max(0, low - count), TIMELINE_PAGE);
  }
  return { length: last.data.at(-1)?.seq ?? 0, tail: last.data.slice(-count) };
}

export const READING_TOOLS: readonly Tool[] = [
  tool({
    name: "list_projects",
    title: "List projects",
    description: "The projects of the key's organization that the key may see, newest first.",
    input: z.strictObject({ limit: limit(240, 20), after }),
    output: page(ProjectSchema),
    annotations: READ,
    run: (api, a) => api.call("GET", "/v1/projects", { query: { limit: a.limit, after: a.after } }),
  }),
  tool({
    name: "list_environments",
    title: "List a project's environments",
    description:
      "A project's environments, newest first: each with `current_deployment_id` (its latest successful " +
      "deployment) and `config_pending` (a variable changed since: a deployment would bring it).",
    input: z.strictObject({ project_id: id("project"), limit: limit(240, 20), after }),
    output: page(EnvironmentSchema),
    annotations: READ,
    run: (api, a) =>
      api.call("GET", `/v1/projects/${a.project_id}/environments`, {
        query: { limit: a.limit, after: a.after },
      }),
  }),
  tool({
    name: "get_environment",
    title: "Read an environment and its protection",
    description:
      "An environment and its protection: approvals required, who reviews, wait timer, concurrency, and its " +
      "lock (null when unlocked).",
    input: z.strictObject({ environment_id: id("environment") }),
    output: z.object({ environment: EnvironmentSchema, protection: ProtectionSchema }),
    annotations: READ,
    run: async (api, a) => {
      const [environment, protection] = await Promise.all([
        api.call<z.output<typeof EnvironmentSchema>>("GET", `/v1/environments/${a.environment_id}`),
        api.call<z.output<typeof ProtectionSchema>>("GET", `/v1/environments/${a.environment_id}/protection`),
      ]);
      return { environment, protection };
    },
  }),
  tool({
    name: "list_deployments",
    title: "List deployments",
    description:
      "Deployments, newest first: of one environment, or of every project the key may see; optionally only " +
      "those in some statuses (`waiting` ones are held by their environment's protection).",
    input: z.strictObject({
      environment_id: id("environment").optional().describe("Only this environment's deployments."),
      status: z
        .array(z.enum(DEPLOYMENT_STATUSES))
        .min(1)
        .optional()
        .describe("Only deployments in one of these statuses."),
      limit: limit(240, 20),
      after,
    }),
    output: page(DeploymentSchema),
    annotations: READ,
    run: (api, a) =>
      api.call(
        "GET",
        a.environment_id === undefined
          ? "/v1/deployments"
          : `/v1/environments/${a.environment_id}/deployments`,
        { query: { status: a.status?.join(","), limit: a.limit, after: a.after } },
      ),
  }),
  tool({
    name: "get_deployment",
    title: "Read a deployment and the end of its timeline",
    description:
      "A deployment (status, stacks, gate, configuration) and the last entries of its timeline: its status " +
      "changes, its stacks' and the engine's log lines, in order.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      timeline_tail: z
        .number()
        .int()
        .min(0)
        .max(100)
        .default(20)
        .describe("How many of the timeline's last entries (0–100, default 20)."),
    }),
    output: z.object({
      deployment: DeploymentSchema,
      timeline: z.object({
        length: z.number().int().describe("How many entries the timeline holds."),
        tail: z.array(TimelineEntrySchema).describe("Its last entries, oldest first."),
      }),
    }),
    annotations: READ,
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "GET",
        `/v1/deployments/${a.deployment_id}`,
      );
      const timeline =
        a.timeline_tail === 0
          ? { length: 0, tail: [] }
          : await timelineTail(api, a.deployment_id, a.timeline_tail);
      return { deployment, timeline };
    },
  }),
  tool({
    name: "wait_for_deployment",
    title: "Wait for a deployment to finish",
    description:
      "Answers as soon as the deployment is final (succeeded, failed, cancelled), or as it stands after " +
      "`timeout_seconds`; call again to wait longer.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      // The API waits up to 60 s; MCP clients commonly give up on a call after 60 s.
      timeout_seconds: z
        .number()
        .min(1)
        .max(50)
        .default(30)
        .describe("Seconds to wait at most, 1–50 (default 30)."),
    }),
    output: z.object({
      deployment: DeploymentSchema,
      final: z.boolean().describe("Whether the deployment has finished."),
    }),
    annotations: READ,
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "GET",
        `/v1/deployments/${a.deployment_id}/wait`,
        { query: { timeout: a.timeout_seconds } },
      );
      return { deployment, final: FINAL.has(deployment.status) };
    },
  }),
];
