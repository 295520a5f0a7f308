/**
 * API_CONTRACT §32, "other organizations never wait on the move", for the work that spans a
 * database's organizations: the cron's forgetting and retention, and the operator's re-encryption.
 * An organization fenced in its database (a move's switch, until its cleanup: 35 s deployed) has
 * rows that refuse every write, so one statement over everyone's rows that touched one of them
 * failed as a whole, and the daily retention of every other organization there waited a day. Each
 * now leaves the fenced organization's rows alone and does the rest; re-encryption says they
 * remain. Through the real cron handler, D1 and the Worker.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { request } from "../../helpers/api";
import { RETENTION_CRON, runCron, SWEEP_CRON } from "../../helpers/cron";
import { createOrgWithOwnerIn } from "../../helpers/databases";
import { reportOk } from "../../helpers/engine";
import { createDeployment, createProject, createStack, unique } from "../../helpers/factories";
import { captureLogs } from "../../helpers/logs";
import { fence } from "../../helpers/moves";
import { randomKey } from "../../helpers/variables";
import { DAY_MS, integrate, writeEvent } from "../../helpers/webhooks";

// The cron logs a summary of each run; a step that failed logs an error, which fails the run.
captureLogs("log");

/** An organization in DB with a project, an old finished deployment and an old event. */
async function tenant() {
  const { org, owner } = await createOrgWithOwnerIn("DB");
  const project = await createProject(owner);
  const stack = await createStack(project.default_environment_id);
  const deployment = await createDeployment(project.default_environment_id, [stack.id]);
  await reportOk(deployment.id, { status: "cancelled" });
  await env.DB.prepare("UPDATE deployment_timeline SET created_at = ? WHERE deployment_id = ?")
    .bind(new Date(Date.now() - 31 * DAY_MS).toISOString(), deployment.id)
    .run();
  const event = await writeEvent(project.id, "changelog.created", {}, 31 * DAY_MS);
  // Written with an Idempotency-Key: its audit entry holds it.
  const keyed = await request("POST", "/v1/projects", {
    key: owner.key,
    body: { name: unique("keyed") },
    headers: { "idempotency-key": unique("kept") },
  });
  expect(keyed.status, keyed.raw).toBe(201);
  // An integration whose rotated-out signing secret's overlap has ended: the cron forgets it.
  const integration = await integrate(project.id, `https://hooks.example.com/${unique("t")}`, {});
  await env.DB.prepare(
    "UPDATE notification_integrations SET previous_signing_secret = signing_secret, previous_secret_expires_at = ? WHERE id = ?",
  )
    .bind(new Date(Date.now() - DAY_MS).toISOString(), integration.id)
    .run();
  const count = async (sql: string, id: string) =>
    (await env.DB.prepare(sql).bind(id).first<{ n: number }>())?.n ?? 0;
  return {
    org,
    owner,
    project,
    /** Every audit entry of it `days` old. */
    age: (days: number) =>
      env.DB.prepare("UPDATE audit_log SET created_at = ? WHERE org_id = ?")
        .bind(new Date(Date.now() - days * DAY_MS).toISOString(), org.id)
        .run(),
    held: async () => ({
      keys: await count(
        "SELECT count(*) AS n FROM audit_log WHERE org_id = ? AND idempotency_key IS NOT NULL",
        org.id,
      ),
      entries: await count("SELECT count(*) AS n FROM audit_log WHERE org_id = ?", org.id),
      timeline: await count(
        "SELECT count(*) AS n FROM deployment_timeline WHERE deployment_id = ?",
        deployment.id,
      ),
      events: await count("SELECT count(*) AS n FROM events WHERE id = ?", event.id),
      previousSecrets: await count(
        "SELECT count(*) AS n FROM notification_integrations WHERE id = ? AND previous_signing_secret IS NOT NULL",
        integration.id,
      ),
    }),
  };
}

describe("the cron beside a fenced organization (§32)", () => {
  it("forgets keys and purges the old records of every other organization of the database, and the fenced one's once the fence is gone", async () => {
    const mover = await tenant();
    const bystander = await tenant();
    const before = await mover.held();
    expect(before).toMatchObject({ keys: 1, events: 1, previousSecrets: 1 });
    expect(before.timeline).toBeGreaterThan(0);
    expect(await bystander.held()).toEqual(before);

    // Past the 24 h of an Idempotency-Key and every retention: the audit log's 400 days, the
    // events' and the timelines' 30. Aged before the fence, which refuses even this.
    await mover.age(500);
    await bystander.age(500);
    const lift = await fence("DB", mover.org.id);
    try {
      // The five-minute sweep forgets the keys and the secrets.
      await runCron(SWEEP_CRON);
      expect(await bystander.held()).toMatchObject({ keys: 0, previousSecrets: 0 });
      expect(await mover.held()).toEqual(before);

      await runCron(RETENTION_CRON);
      // An organization's newest entry stays, whatever its age (§30: the next sequence counts from it).
      expect(await bystander.held()).toEqual({
        keys: 0,
        entries: 1,
        timeline: 0,
        events: 0,
        previousSecrets: 0,
      });
      expect(await mover.held()).toEqual(before);
    } finally {
      await lift();
    }
    await runCron(SWEEP_CRON);
    await runCron(RETENTION_CRON);
    expect(await mover.held()).toEqual({ keys: 0, entries: 1, timeline: 0, events: 0, previousSecrets: 0 });
  });
});

describe("re-encryption beside a fenced organization (§32)", () => {
  const admin = { authorization: `Bearer ${env.ADMIN_TOKEN}` };
  const reencrypt = (bindings: Record<string, string>) =>
    request<{ reencrypted: number; remaining: boolean }>("POST", "/internal/v1/variables/reencrypt", {
      headers: admin,
      body: { limit: 100 },
      bindings,
    });

  it("moves every other organization's values, leaves the fenced one's and says they remain; then moves them", async () => {
    const oldKey = randomKey();
    const sealedUnderOld = { VARIABLES_KEY: oldKey };
    const rotated = { VARIABLES_KEY: env.VARIABLES_KEY, VARIABLES_KEY_PREVIOUS: oldKey };
    const tenants = [];
    for (let i = 0; i < 2; i++) {
      const { org, owner } = await createOrgWithOwnerIn("DB");
      const project = await createProject(owner);
      const created = await request<{ id: string }>(
        "POST",
        `/v1/environments/${project.default_environment_id}/variables`,
        {
          key: owner.key,
          body: { name: "ROTATED", type: "secret", value: `value-${i}` },
          bindings: sealedUnderOld,
        },
      );
      expect(created.status, created.raw).toBe(201);
      tenants.push({ org, owner, project, variableId: created.body.id });
    }
    const [mover, bystander] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const oldVersion = (
      await env.DB.prepare("SELECT key_version AS v FROM variables WHERE id = ?")
        .bind(mover.variableId)
        .first<{ v: number }>()
    )?.v;
    // Under the old key: the variable and the value its version keeps, per project.
    const stillOld = async (projectId: string) =>
      (
        await env.DB.prepare(
          "SELECT (SELECT count(*) FROM variables WHERE project_id = ?1 AND key_version = ?2) + (SELECT count(*) FROM variable_version_values WHERE project_id = ?1 AND key_version = ?2) AS n",
        )
          .bind(projectId, oldVersion)
          .first<{ n: number }>()
      )?.n;
    expect(await stillOld(mover.project.id)).toBe(2);
    expect(await stillOld(bystander.project.id)).toBe(2);
    // And an integration of the mover whose signing secret is still stored in clear, which every
    // pass seals, rotation or not.
    const integration = await integrate(mover.project.id, `https://hooks.example.com/${unique("m")}`, {});
    const storedSecret = async () =>
      (
        await env.DB.prepare("SELECT signing_secret AS s FROM notification_integrations WHERE id = ?")
          .bind(integration.id)
          .first<{ s: string }>()
      )?.s;
    await env.DB.prepare("UPDATE notification_integrations SET signing_secret = ? WHERE id = ?")
      .bind(integration.signing_secret, integration.id)
      .run();

    const lift = await fence("DB", mover.org.id);
    try {
      for (let pass = 0; pass < 2; pass++) {
        const step = await reencrypt(rotated);
        expect(step.status, step.raw).toBe(200);
        // The fenced organization's values are still to do, however often it is asked.
        expect(step.body.remaining).toBe(true);
      }
      expect(await stillOld(bystander.project.id)).toBe(0);
      expect(await stillOld(mover.project.id)).toBe(2);
      expect(await storedSecret()).toBe(integration.signing_secret);
      const reveal = await request<{ value: string }>("GET", `/v1/variables/${bystander.variableId}/value`, {
        key: bystander.owner.key,
      });
      expect(reveal.body).toEqual({ value: "value-1" });
    } finally {
      await lift();
    }
    let last: { reencrypted: number; remaining: boolean } | undefined;
    for (let pass = 0; pass < 10 && last?.remaining !== false; pass++) {
      const step = await reencrypt(rotated);
      expect(step.status, step.raw).toBe(200);
      last = step.body;
    }
    expect(last?.remaining).toBe(false);
    expect(await stillOld(mover.project.id)).toBe(0);
    expect(await storedSecret()).toMatch(/^v1\./);
    const reveal = await request<{ value: string }>("GET", `/v1/variables/${mover.variableId}/value`, {
      key: mover.owner.key,
    });
    expect(reveal.body).toEqual({ value: "value-0" });
  });
});
