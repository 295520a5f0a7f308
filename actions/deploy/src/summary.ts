/**
 * The job summary (`core.summary`, appended to `GITHUB_STEP_SUMMARY`): the deployment, its
 * stacks' final statuses, and the tail of its log. What the engine wrote (log lines, reasons) is
 * shown as text, HTML-escaped and inside `<code>`/`<pre>`, so nothing in it becomes a link, a
 * mention or markup; the summary itself carries no link.
 */
import * as core from "@actions/core";
import type { Deployment } from "../../../clients/typescript/src/index.js";

export type Report = {
  deployment?: Deployment;
  /** The deployment promoted, for a promotion. */
  promotedFrom?: string;
  timedOut?: boolean;
  timeoutSeconds?: number;
  waited?: boolean;
  logs?: { tail: string[]; total: number };
  /** Why the step failed, when the deployment's own status does not say it (a refusal, a timeout). */
  failure?: string;
};

const MAX_LINE = 1000;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

// An empty cell would be left unclosed by core.summary's table (`<td>` without `</td>`).
const code = (text: string | null | undefined) => (text ? `<code>${escapeHtml(text)}</code>` : "-");

/** Writes the summary; a runner without `GITHUB_STEP_SUMMARY` gets none (and a warning). */
export async function writeSummary(report: Report): Promise<void> {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const s = core.summary;
  const d = report.deployment;
  if (!d) {
    s.addHeading("Deploy Platform: nothing deployed", 3).addRaw(`<p>${code(report.failure)}</p>`, true);
  } else {
    const state = report.timedOut ? `${d.status} (timed out after ${report.timeoutSeconds} s)` : d.status;
    s.addHeading(`Deploy Platform: deployment ${escapeHtml(d.id)} ${escapeHtml(state)}`, 3);
    const rows: Array<[string, string]> = [
      ["Environment", code(d.environment_id)],
      ...(report.promotedFrom
        ? ([["Promoted from", code(report.promotedFrom)]] as Array<[string, string]>)
        : []),
      ["Status", escapeHtml(state)],
      ["Created", escapeHtml(d.created_at)],
      ["Finished", escapeHtml(d.finished_at ?? "-")],
    ];
    s.addTable(rows.map(([k, v]) => [{ data: k, header: true }, v]));
    const stacks = d.data.stacks ?? [];
    if (stacks.length > 0)
      s.addTable([
        ["Stack", "Status", "Since", "Reason"].map((h) => ({ data: h, header: true })),
        ...stacks.map((st) => [
          code(st.id),
          escapeHtml(st.status),
          escapeHtml(st.timestamp),
          code(st.status_reason),
        ]),
      ]);
    if (report.failure) s.addRaw(`<p>${code(report.failure)}</p>`, true);
    const logs = report.logs;
    if (logs && logs.total > 0) {
      const shown = logs.tail.length;
      s.addRaw(
        `<p>Log: ${shown === logs.total ? `all ${shown} lines` : `the last ${shown} of ${logs.total} lines`}</p>`,
        true,
      );
      const lines = logs.tail.map((l) => (l.length > MAX_LINE ? `${l.slice(0, MAX_LINE)}…` : l));
      s.addCodeBlock(escapeHtml(lines.join("\n")));
    } else if (report.waited) s.addRaw("<p>Log: no lines</p>", true);
  }
  try {
    await s.write();
  } catch (err) {
    core.warning(`no job summary: ${err instanceof Error ? err.message : String(err)}`);
  }
}
