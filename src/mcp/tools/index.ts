/**
 * The MCP server's tools: the jobs a release asks of an assistant (find a project, its
 * environments and deployments; read a deployment and the end of its timeline; wait for one;
 * start one; promote one after its plan; plan and apply a variable change; list a scope's versions
 * and restore one; lock and unlock an environment; review a waiting deployment; conclude its checks; read the organization's limits), each one or a few
 * calls of the API's own operations (../api.ts). What a tool declares: ./define.ts.
 */
import type { Tool } from "./define";
import { ORGANIZATION_TOOLS } from "./organization";
import { READING_TOOLS } from "./reading";
import { RELEASING_TOOLS } from "./releasing";
import { VARIABLE_TOOLS } from "./variables";

export type { Tool } from "./define";

export const TOOLS: readonly Tool[] = [
  ...READING_TOOLS,
  ...RELEASING_TOOLS,
  ...VARIABLE_TOOLS,
  ...ORGANIZATION_TOOLS,
];
