/**
 * The tools that release: start a deployment, plan and make a promotion, lock and unlock an
 * environment, review a waiting deployment. Every write sends an Idempotency-Key.
 */
import * as z from "zod";
import { REVIEW_STATES } from "../../db/schema";
import {
  type DeploymentSchema,
  DeploymentSourceSchema,
  PatchOperationSchema,
} from "../../schemas/deployment";
import { PromotionPlanSchema } from "../../schemas/promotion-writes";
import { ProtectionSchema } from "../../schemas/protection";
import { deploymentAnswer, id, idempotencyKey, newKey, READ, type Tool, tool, write } from "./define";

export const RELEASING_TOOLS: readonly Tool[] = [
  tool({
    name: "start_deployment",
    title: "Start a deployment",
    description:
      "Starts a deployment in an environment: `queued` for the engine, or `waiting` while the environment's " +
      "protection holds it (approvals, wait timer, lock). It runs with the environment's variables as they are now.",
    input: z.strictObject({
      environment_id: id("environment"),
      stack_ids: z
        .array(id("stack"))
        .min(1)
        .optional()
        .describe("The stacks to deploy; left out: every stack of the environment."),
      patch: z
        .array(PatchOperationSchema)
        .default([])
        .describe("The change to deploy, as RFC 6902 operations."),
      source: DeploymentSourceSchema.optional().describe("Where the code comes from (git or registry)."),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const data = { patch: a.patch, ...(a.source === undefined ? {} : { source: a.source }) };
      const body = { data, ...(a.stack_ids === undefined ? {} : { stack_ids: a.stack_ids }) };
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/environments/${a.environment_id}/deployments`,
        { body, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
  tool({
    name: "plan_promotion",
    title: "Plan a promotion (dry run)",
    description:
      "What promoting a succeeded deployment to another environment of its project would do, changing " +
      "nothing: each stack and the target's stack it maps to, and the variable names the target lacks or " +
      "holds beyond the deployment's configuration. Refused as the promotion would be.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      environment_id: id("target environment"),
    }),
    output: PromotionPlanSchema,
    annotations: READ,
    run: (api, a) =>
      api.call("POST", `/v1/deployments/${a.deployment_id}/promote`, {
        body: { environment_id: a.environment_id, dry_run: true },
      }),
  }),
  tool({
    name: "promote_deployment",
    title: "Promote a deployment",
    description:
      "Deploys what a succeeded deployment deployed (the same change and source, nothing rebuilt) to another " +
      "environment of its project, with that environment's own variables. Plan it first (plan_promotion).",
    input: z.strictObject({
      deployment_id: id("deployment"),
      environment_id: id("target environment"),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/deployments/${a.deployment_id}/promote`,
        { body: { environment_id: a.environment_id }, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
  tool({
    name: "lock_environment",
    title: "Lock an environment",
    description:
      "Holds every new deployment of the environment as `waiting` and keeps queued ones from starting, until " +
      "unlocked; deployments already in progress finish. Refused when already locked.",
    input: z.strictObject({
      environment_id: id("environment"),
      reason: z.string().min(1).max(500).describe("Why: shown to everyone the lock holds up."),
      idempotency_key: idempotencyKey,
    }),
    output: z.object({ protection: ProtectionSchema }),
    annotations: write(false),
    run: async (api, a) => {
      const protection = await api.call<z.output<typeof ProtectionSchema>>(
        "POST",
        `/v1/environments/${a.environment_id}/lock`,
        { body: { reason: a.reason }, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { protection };
    },
  }),
  tool({
    name: "unlock_environment",
    title: "Unlock an environment",
    description:
      "Removes the environment's lock (done whether it was locked or not): every deployment nothing else holds " +
      "is released and runs.",
    input: z.strictObject({ environment_id: id("environment"), idempotency_key: idempotencyKey }),
    output: z.object({ environment_id: z.string(), locked: z.literal(false) }),
    annotations: write(true, true),
    run: async (api, a) => {
      await api.call("DELETE", `/v1/environments/${a.environment_id}/lock`, {
        idempotencyKey: newKey(a.idempotency_key),
      });
      return { environment_id: a.environment_id, locked: false as const };
    },
  }),
  tool({
    name: "review_deployment",
    title: "Approve or reject a waiting deployment",
    description:
      "Reviews a deployment waiting for approval: `approved` counts toward its environment's required " +
      "approvals (the last one releases it), `rejected` cancels it at once. One review per account.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      state: z.enum(REVIEW_STATES),
      comment: z.string().max(1000).optional().describe("Why (at most 1000 characters)."),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const body = { state: a.state, ...(a.comment === undefined ? {} : { comment: a.comment }) };
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/deployments/${a.deployment_id}/reviews`,
        { body, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
  tool({
    name: "conclude_check",
    title: "Conclude a waiting deployment's check",
    description:
      "Reports how a check of a waiting deployment went (API_CONTRACT §31): `passed` (the last pass releases " +
      "it when nothing else holds it) or `failed` (cancels it at once). A check concludes once.",
    input: z.strictObject({
      deployment_id: id("deployment"),
      name: z.string().min(1).max(100).describe("The check's name, as the deployment's gate lists it."),
      conclusion: z.enum(["passed", "failed"]),
      details_url: z.string().max(2000).optional().describe("An https:// URL of its details."),
      summary: z.string().max(1000).optional().describe("What it found (at most 1000 characters)."),
      idempotency_key: idempotencyKey,
    }),
    output: deploymentAnswer,
    annotations: write(true),
    run: async (api, a) => {
      const body = {
        conclusion: a.conclusion,
        ...(a.details_url === undefined ? {} : { details_url: a.details_url }),
        ...(a.summary === undefined ? {} : { summary: a.summary }),
      };
      const deployment = await api.call<z.output<typeof DeploymentSchema>>(
        "POST",
        `/v1/deployments/${a.deployment_id}/checks/${encodeURIComponent(a.name)}`,
        { body, idempotencyKey: newKey(a.idempotency_key) },
      );
      return { deployment };
    },
  }),
];
