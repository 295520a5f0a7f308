// The bench's local data, written as SQL (loaded with `wrangler d1 execute --local --file`):
//
//  - a "deep" organization: owner, DEEP_KEYS keys, DEEP_ROWS projects with their environments
//    (for the pagination-depth figures);
//  - the bench organization: owner, `keyCount` keys, 25 projects (each with its `production`
//    environment and its owner as project member), 20 more members of the first project, and
//    `deploymentCount` queued deployments in the first project's environment (each one moved
//    to `in_progress` once by the transition benchmark, which records an event); and, in a second
//    project (so that no transition's event fans out to them), 25 events and 25 notification
//    integrations, for the lists behind a project.
import { createHash, randomBytes } from "node:crypto";
import { newId, sqlText as q } from "../scripts/seed-sql.mjs";

export const DEEP_ROWS = 10_050;
const DEEP_KEYS = 400;

const newKey = () => `dpk_${randomBytes(32).toString("base64url")}`;
const sha256 = (s) => createHash("sha256").update(s).digest("hex");
const iso = (ms) => new Date(ms).toISOString();
const PROFILE = JSON.stringify({ bio: null, github: null, location: null, twitter: null, website: null });

function insertRows(lines, head, rows, per = 200) {
  for (let i = 0; i < rows.length; i += per)
    lines.push(`${head} VALUES ${rows.slice(i, i + per).join(",")};`);
}

function organization(lines, name, now) {
  const org = newId();
  const owner = newId();
  lines.push(
    `INSERT INTO organizations (id, name, created_at) VALUES (${q(org)}, ${q(name)}, ${q(iso(now))});`,
    `INSERT INTO accounts (id, name, display_name, avatar, profile, created_at) VALUES (${q(owner)}, ${q(`${name}-owner`.toLowerCase().replaceAll(" ", "-"))}, 'Owner', NULL, ${q(PROFILE)}, ${q(iso(now))});`,
    `INSERT INTO org_members (org_id, account_id, role, created_at) VALUES (${q(org)}, ${q(owner)}, 'owner', ${q(iso(now))});`,
  );
  return { org, owner };
}

function keys(lines, org, owner, count, now) {
  const out = Array.from({ length: count }, newKey);
  insertRows(
    lines,
    "INSERT INTO api_keys (id, org_id, account_id, created_by, name, key_hash, created_at)",
    out.map(
      (key) =>
        `(${q(newId())}, ${q(org)}, ${q(owner)}, ${q(owner)}, 'bench', ${q(sha256(key))}, ${q(iso(now))})`,
    ),
  );
  return out;
}

function projects(lines, org, owner, count, now, prefix) {
  const rows = [];
  const envs = [];
  const members = [];
  const out = [];
  for (let j = 0; j < count; j++) {
    const id = newId();
    const env = newId();
    const at = q(iso(now - (count - j) * 1000));
    rows.push(
      `(${q(id)}, ${q(org)}, '${prefix}${j}', '${prefix}${j}', NULL, NULL, NULL, ${q(env)}, 'connected', ${at}, ${at})`,
    );
    envs.push(`(${q(env)}, ${q(id)}, 'production', ${at})`);
    if (owner) members.push(`(${q(newId())}, ${q(id)}, ${q(owner)}, 'owner', ${at})`);
    out.push({ id, env });
  }
  insertRows(
    lines,
    "INSERT INTO projects (id, org_id, name, name_key, description, icon, repo_id, default_environment_id, connection_status, created_at, updated_at)",
    rows,
  );
  insertRows(lines, "INSERT INTO environments (id, project_id, name, created_at)", envs);
  if (members.length) {
    insertRows(lines, "INSERT INTO project_members (id, project_id, account_id, role, created_at)", members);
  }
  return out;
}

export function seedSql({ keyCount, deploymentCount }) {
  const now = Date.now();
  const lines = [];
  const deep = organization(lines, "Deep Org", now);
  const deepKeys = keys(lines, deep.org, deep.owner, DEEP_KEYS, now);
  projects(lines, deep.org, null, DEEP_ROWS, now, "p");

  const bench = organization(lines, "Bench Org", now);
  const benchKeys = keys(lines, bench.org, bench.owner, keyCount, now);
  const benchProjects = projects(lines, bench.org, bench.owner, 25, now - 60_000, "bench-");
  const first = benchProjects[benchProjects.length - 1];
  const accounts = [];
  const orgMembers = [];
  const projectMembers = [];
  for (let i = 0; i < 20; i++) {
    const account = newId();
    accounts.push(`(${q(account)}, 'member-${i}', 'Member ${i}', NULL, ${q(PROFILE)}, ${q(iso(now))})`);
    orgMembers.push(`(${q(bench.org)}, ${q(account)}, 'member', ${q(iso(now))})`);
    projectMembers.push(`(${q(newId())}, ${q(first.id)}, ${q(account)}, 'viewer', ${q(iso(now + i))})`);
  }
  insertRows(lines, "INSERT INTO accounts (id, name, display_name, avatar, profile, created_at)", accounts);
  insertRows(lines, "INSERT INTO org_members (org_id, account_id, role, created_at)", orgMembers);
  insertRows(
    lines,
    "INSERT INTO project_members (id, project_id, account_id, role, created_at)",
    projectMembers,
  );
  const deployments = [];
  const rows = [];
  for (let i = 0; i < deploymentCount; i++) {
    const id = newId();
    const at = q(iso(now - (deploymentCount - i) * 10));
    rows.push(
      `(${q(id)}, ${q(first.id)}, ${q(first.env)}, ${q(bench.org)}, '[]', '{"patch":[],"stacks":[]}', 'queued', NULL, NULL, ${at}, ${at})`,
    );
    deployments.push(id);
  }
  insertRows(
    lines,
    "INSERT INTO deployments (id, project_id, environment_id, org_id, stack_ids, data, status, started_at, finished_at, created_at, updated_at)",
    rows,
  );
  const listed = benchProjects[benchProjects.length - 2];
  const events = [];
  const integrations = [];
  for (let i = 0; i < 25; i++) {
    const at = q(iso(now - (25 - i) * 1000));
    const data = JSON.stringify({ project_id: listed.id, entry: `bench ${i}` });
    events.push(`(${q(newId())}, ${q(listed.id)}, 'changelog.created', ${q(data)}, ${at}, ${at})`);
    const configuration = JSON.stringify({ changelog: true, deployments_failed: i % 2 === 0 });
    integrations.push(
      `(${q(newId())}, ${q(listed.id)}, 'webhook', 'https://hooks.example.com/bench/${i}', ${q(configuration)}, ${q(`whsec_${randomBytes(24).toString("base64")}`)}, ${at}, ${at})`,
    );
  }
  insertRows(lines, "INSERT INTO events (id, project_id, type, data, enqueued_at, created_at)", events);
  insertRows(
    lines,
    "INSERT INTO notification_integrations (id, project_id, type, url, configuration, signing_secret, created_at, updated_at)",
    integrations,
  );
  return {
    sql: lines.join("\n"),
    deep: { ...deep, keys: deepKeys },
    bench: { ...bench, keys: benchKeys, project: first, listed, deployments },
  };
}
