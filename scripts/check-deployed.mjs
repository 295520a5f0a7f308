#!/usr/bin/env node
// `node scripts/check-deployed.mjs <base URL>`: the deploy workflow's last step, and the check of
// docs/deploy.md's first deploy. The deployed Worker answers: /healthz, /openapi.json (with the
// API's info.version) and an unauthenticated /v1 request, 401 with the contract's error body and
// an x-request-id. Retries for up to a minute while the new version reaches the edge.
// Without a URL (the GitHub environment has no BASE_URL variable) it says so and passes.
const base = process.argv[2]?.replace(/\/+$/, "");
if (!base) {
  const note = "no BASE_URL variable in this GitHub environment: the deployed API was not checked";
  console.log(process.env.GITHUB_ACTIONS ? `::notice::${note}` : note);
  process.exit(0);
}

async function attempt() {
  const problems = [];
  const health = await fetch(`${base}/healthz`);
  if (health.status !== 200) problems.push(`/healthz answered ${health.status}`);
  const doc = await fetch(`${base}/openapi.json`);
  const info = doc.ok ? (await doc.json()).info : undefined;
  if (!info?.version) problems.push(`/openapi.json answered ${doc.status} without info.version`);
  const anonymous = await fetch(`${base}/v1/projects`);
  const body = await anonymous.json().catch(() => undefined);
  if (anonymous.status !== 401 || body?.code === undefined || !anonymous.headers.get("x-request-id"))
    problems.push(`/v1/projects without a key answered ${anonymous.status} ${JSON.stringify(body)}`);
  return { problems, version: info?.version };
}

let last;
for (let i = 0; i < 12; i++) {
  try {
    last = await attempt();
  } catch (err) {
    last = { problems: [String(err)] };
  }
  if (last.problems.length === 0) break;
  await new Promise((r) => setTimeout(r, 5000));
}
if (last.problems.length > 0) {
  for (const p of last.problems) console.error(`check-deployed: ${base}: ${p}`);
  process.exit(1);
}
console.log(`check-deployed: ${base} answers (API version ${last.version})`);
