/**
 * The one-line Slack message for an event (Slack incoming webhooks take `{ text }`).
 * Deployment events carry the deployment record; the four internal types carry whatever the
 * caller sent, so their summary is taken from the first descriptive field present.
 */
export type SlackEvent = { type: string; data: Record<string, unknown> };

const MAX_FIELD = 200;

/** Slack's mrkdwn treats `&`, `<` and `>` as control characters; text must escape them. */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A short, single-line, escaped rendering of a value that came from outside. */
function field(value: unknown): string | undefined {
  if (typeof value !== "string" && typeof value !== "number") return undefined;
  const oneLine = String(value).replace(/\s+/g, " ").trim();
  if (!oneLine) return undefined;
  const cut = oneLine.length > MAX_FIELD ? `${oneLine.slice(0, MAX_FIELD - 1)}…` : oneLine;
  return escapeSlack(cut);
}

function firstField(data: Record<string, unknown>, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = field(data[key]);
    if (value) return value;
  }
  return undefined;
}

const SUMMARY_KEYS = ["title", "summary", "message", "description", "name"];

function deploymentLine(data: Record<string, unknown>, verb: string, emoji: string): string {
  const deployment =
    typeof data.deployment === "object" && data.deployment !== null
      ? (data.deployment as Record<string, unknown>)
      : {};
  const id = field(deployment.id) ?? "unknown";
  const env = field(deployment.environment_id);
  return `${emoji} Deployment \`${id}\` ${verb}${env ? ` in environment \`${env}\`` : ""}`;
}

export function slackText(event: SlackEvent): string {
  const { data } = event;
  const project = field(data.project_id);
  let line: string;
  switch (event.type) {
    case "deployment.in_progress":
      line = deploymentLine(data, "is in progress", ":hourglass_flowing_sand:");
      break;
    case "deployment.succeeded":
      line = deploymentLine(data, "succeeded", ":white_check_mark:");
      break;
    case "deployment.failed":
      line = deploymentLine(data, "failed", ":x:");
      break;
    case "changelog.created":
      line = `:memo: Changelog: ${firstField(data, SUMMARY_KEYS) ?? "new entry"}`;
      break;
    case "promotion.created":
      line = `:rocket: Promotion: ${firstField(data, SUMMARY_KEYS) ?? "new promotion"}`;
      break;
    case "service.in_alarm": {
      const service = firstField(data, ["service", "name"]) ?? "A service";
      const reason = firstField(data, ["reason", "message", "description"]);
      line = `:rotating_light: ${service} is in alarm${reason ? `: ${reason}` : ""}`;
      break;
    }
    case "service.ok":
      line = `:large_green_circle: ${firstField(data, ["service", "name"]) ?? "A service"} is OK`;
      break;
    default:
      line = `Event ${field(event.type) ?? "unknown"}`;
  }
  return project ? `${line} (project \`${project}\`)` : line;
}
