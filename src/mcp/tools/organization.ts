/** The tools about the organization as a whole: its limits (API_CONTRACT §29). */
import * as z from "zod";
import { OrgLimitsSchema } from "../../schemas/limits";
import type { Api } from "../api";
import { READ, type Tool, tool } from "./define";

/** The organization of the key the assistant acts with. */
async function orgOf(api: Api): Promise<string> {
  return (await api.call<{ org_id: string }>("GET", "/v1/api-keys/current")).org_id;
}

export const ORGANIZATION_TOOLS: readonly Tool[] = [
  tool({
    name: "get_org_limits",
    title: "Read the organization's limits",
    description:
      "What the key's organization may hold (projects, environments, variables, API keys, integrations, audit " +
      "streams, deployments in the last 24 hours), how much of each it holds now, and, for deployments, how " +
      "many seconds until the oldest leaves the 24-hour window. A create past a limit is refused with 409.",
    input: z.strictObject({}),
    output: OrgLimitsSchema,
    annotations: READ,
    run: async (api) => api.call("GET", `/v1/orgs/${await orgOf(api)}/limits`),
  }),
];
