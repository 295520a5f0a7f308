/** The bodies that replace an environment's protection, lock it, and review a waiting deployment (API_CONTRACT §26). */
import * as z from "zod";
import { REVIEW_STATES } from "../db/schema";
import { writtenAsUrl } from "../lib/written-url";
import { echoedReadOnlyFields, nullAsAbsent, text } from "../openapi/primitives";
import { CheckSchema, ProtectionSchema, settings } from "./protection";

export const ProtectionReplaceSchema = z
  .strictObject({
    ...echoedReadOnlyFields(ProtectionSchema, [
      "required_approvals",
      "reviewer_role",
      "prevent_self_review",
      "wait_timer",
      "concurrency",
    ]),
    ...settings,
    checks: nullAsAbsent(
      z
        .array(z.strictObject(CheckSchema.shape))
        .max(10)
        .superRefine((checks, issues) => {
          const seen = new Set<string>();
          checks.forEach((check, i) => {
            if (seen.has(check.name))
              issues.addIssue({ code: "custom", path: [i, "name"], message: "Each check's name is unique." });
            seen.add(check.name);
          });
        }),
    ).openapi({ description: "0–10 checks (§31); left out (or `null`), none." }),
  })
  .openapi("EnvironmentProtectionReplace", {
    description:
      "The five settings, all required, and the checks (left out: none). The record's read-only fields may be " +
      "sent back as read; they change nothing (the lock has its own operations), and `environment_id` must match.",
  });

export type ProtectionReplaceInput = z.infer<typeof ProtectionReplaceSchema>;

export const LockSchema = z
  .strictObject({
    reason: text(1, 500).openapi({ description: "Why: shown to everyone the lock holds up." }),
  })
  .openapi("EnvironmentLock");

export type LockInput = z.infer<typeof LockSchema>;

export const ReviewCreateSchema = z
  .strictObject({
    state: z.enum(REVIEW_STATES).openapi({ description: "`rejected` cancels the deployment at once." }),
    comment: nullAsAbsent(text(0, 1000)),
  })
  .openapi("DeploymentReviewCreate");

export type ReviewInput = z.infer<typeof ReviewCreateSchema>;

/**
 * `value` parsed, when it is an `https://` URL as written (API_CONTRACT §31's `details_url`;
 * ../lib/written-url.ts) with a host and no backslash (which the parser reads as `/`), else null.
 * It is stored as sent, so a reader gets back exactly what was given, within the same 2000
 * characters.
 */
export function httpsUrl(value: string): URL | null {
  if (!writtenAsUrl(value) || value.includes("\\")) return null;
  const url = URL.parse(value);
  return url?.protocol === "https:" && url.hostname !== "" ? url : null;
}

/** A check's conclusion (API_CONTRACT §31, `POST /v1/deployments/{id}/checks/{name}`). */
export const CheckConclusionSchema = z
  .strictObject({
    conclusion: z
      .enum(["passed", "failed"])
      .openapi({ description: "`failed` cancels the deployment at once." }),
    details_url: nullAsAbsent(
      z
        .string()
        .max(2000)
        .refine(
          (value) => httpsUrl(value) !== null,
          "Must be an https:// URL as written: `https://`, a host, no space, control character or backslash.",
        )
        .openapi({
          format: "uri",
          description: "Where the check's details are (an `https://` URL, ≤ 2000, not `user:pass@`).",
        }),
    ),
    summary: nullAsAbsent(text(0, 1000)).openapi({
      description: "What the check found (≤ 1000 characters).",
    }),
  })
  .openapi("DeploymentCheckConclusion");

export type CheckConclusionInput = z.infer<typeof CheckConclusionSchema>;
