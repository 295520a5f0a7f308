// The bench's local data, written as SQL (loaded with `wrangler d1 execute --local --file`):
//
//  - with `deep`, a "deep" organization: owner, 20 keys, DEEP_ROWS projects with their environments
//    (the deep-pages probe);
//  - the bench organization: owner, `keyCount` (1) keys, 25 projects (each with its `production`
//    environment and its owner as project member), 20 more members of the first project, and
//    `deploymentCount` (0) queued deployments in the first project's environment (each moved to
//    `in_progress` once by a transition scenario, which records an event); and, in a second project
//    (so that no transition's event fans out to them), 25 events and 25 notification integrations.
import { createHash, randomBytes } from "node:crypto";
import { newId, sqlText } from "../scripts/seed-sql.mjs";

export const DEEP_ROWS = 10_050;
const PROFILE = JSON.stringify({ bio: null, github: null, location: null, twitter: null, website: null });
const COLUMNS = {
  organizations: "id, name, created_at",
  accounts: "id, name, display_name, avatar, profile, created_at",
  org_members: "org_id, account_id, role, created_at",
  api_keys: "id, org_id, account_id, created_by, name, key_hash, created_at",
  api_key_index: "key_hash, key_id, org_id, created_at",
  projects:
    "id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at",
  environments: "id, project_id, name, created_at",
  project_members: "id, project_id, account_id, role, created_at",
  deployments:
    "id, project_id, environment_id, org_id, stack_ids, data, status, started_at, finished_at, created_at, updated_at",
  events: "id, project_id, type, data, enqueued_at, created_at",
  notification_integrations:
    "id, project_id, type, url, configuration, signing_secret, created_at, updated_at",
};
/** Every §29 limit lifted (a trigger makes an organization's row): DEEP_ROWS projects, 20,000 deployments. */
const LIMITS = "projects environments variables api_keys integrations audit_streams deployments_per_day";
const LIFTED = LIMITS.split(" ").map((name) => `${name}_limit = 1000000000`);
const hash = (key) => createHash("sha256").update(key).digest("hex");

export function seedSql({ keyCount = 1, deploymentCount = 0, deep: withDeep = false } = {}) {
  const lines = [];
  const now = Date.now();
  const at = (ms = 0) => new Date(now + ms).toISOString();
  /** INSERTs of a row per item (`row(item)`: values in COLUMNS' order, null as NULL), 200 rows each. */
  const insert = (table, items, row = (x) => x) => {
    for (let i = 0; i < items.length; i += 200) {
      const values = items.slice(i, i + 200).map((item, j) =>
        row(item, i + j)
          .map(sqlText)
          .join(", "),
      );
      lines.push(`INSERT INTO ${table} (${COLUMNS[table]}) VALUES (${values.join("),(")});`);
    }
  };
  const organization = (name, count) => {
    const [org, owner] = [newId(), newId()];
    insert("organizations", [[org, name, at()]]);
    lines.push(`UPDATE org_limits SET ${LIFTED.join(", ")} WHERE org_id = ${sqlText(org)};`);
    insert("accounts", [[owner, `${name}-owner`, "Owner", null, PROFILE, at()]]);
    insert("org_members", [[org, owner, "owner", at()]]);
    const keys = Array.from({ length: count }, () => `dpk_${randomBytes(32).toString("base64url")}`);
    const ids = keys.map(() => newId());
    insert("api_keys", keys, (key, i) => [ids[i], org, owner, owner, "bench", hash(key), at()]);
    // The directory's index of each key (src/db/databases.ts): these organizations live in DB itself.
    insert("api_key_index", keys, (key, i) => [hash(key), ids[i], org, at()]);
    return { org, owner, keys };
  };
  const projects = (org, owner, n, prefix, since) => {
    const rows = Array.from({ length: n }, (_, j) => [newId(), newId(), prefix + j, at(since + j * 1000)]);
    const project = ([id, e, name, t]) => [id, org, name, name, null, null, null, e, "connected", t, t];
    insert("projects", rows, project);
    insert("environments", rows, ([id, e, , t]) => [e, id, "production", t]);
    if (owner) insert("project_members", rows, ([id, , , t]) => [newId(), id, owner, "owner", t]);
    return rows.map(([id, env]) => ({ id, env }));
  };

  const deep = withDeep ? organization("deep", 20) : { keys: [] };
  if (withDeep) projects(deep.org, null, DEEP_ROWS, "p", -DEEP_ROWS * 1000);
  const bench = organization("bench", keyCount);
  const [listed, p] = projects(bench.org, bench.owner, 25, "bench-", -85_000).slice(-2);
  const members = Array.from({ length: 20 }, (_, i) => [newId(), `member-${i}`]);
  insert("accounts", members, ([id, name]) => [id, name, name, null, PROFILE, at()]);
  insert("org_members", members, ([id]) => [bench.org, id, "member", at()]);
  insert("project_members", members, ([id], i) => [newId(), p.id, id, "viewer", at(i)]);
  const deployments = Array.from({ length: deploymentCount }, (_, i) => [
    newId(),
    at(10 * (i - deploymentCount)),
  ]);
  const data = '{"patch":[],"stacks":[]}';
  const deployment = ([id, t]) => [id, p.id, p.env, bench.org, "[]", data, "queued", null, null, t, t];
  insert("deployments", deployments, deployment);
  const rows = Array.from({ length: 25 }, (_, i) => [newId(), listed.id, at(-1000 * (25 - i)), i]);
  const event = (i) => JSON.stringify({ project_id: listed.id, entry: `bench ${i}` });
  insert("events", rows, ([id, project, t, i]) => [id, project, "changelog.created", event(i), t, t]);
  const hook = (i) => JSON.stringify({ changelog: true, deployments_failed: i % 2 === 0 });
  const secret = () => `whsec_${randomBytes(24).toString("base64")}`;
  const url = (i) => `https://hooks.example.com/bench/${i}`;
  const integration = ([, project, t, i]) => [newId(), project, "webhook", url(i), hook(i), secret(), t, t];
  insert("notification_integrations", rows, integration);
  const ids = deployments.map(([id]) => id);
  return { sql: lines.join("\n"), deep, bench: { ...bench, project: p, listed, deployments: ids } };
}
