// Part three from the CLI (`npm run check:cli`, scripts/check-cli.mjs), on the real server:
// following a deployment (API_CONTRACT §19), variable sets as .env files with their versions and a
// dry run (§18), redeploy (§20), keys that make keys (§21). Each case fails if /openapi.json does
// not document the operation it calls; every answer comes from the real service.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * `cli` runs the installed bin in `scratch` with the demo `key`; `internal` calls the internal API;
 * `newDeployment` makes one in the demo project's default environment `envId` (its stack `stack`)
 * and `move` moves one as the engine does; `failed` is a deployment that failed.
 */
export async function partThreeChecks({
  cli,
  check,
  undocumented,
  serves,
  base,
  key,
  internal,
  envId,
  stack,
  newDeployment,
  move,
  failed,
  scratch,
}) {
  // §19: follow, when the service serves the timeline.
  if (serves("/v1/deployments/{id}/timeline", "get")) {
    for (const [final, code] of [
      ["succeeded", 0],
      ["failed", 1],
    ]) {
      const d = await newDeployment();
      const following = cli(["deployments", "follow", d.id, "--timeout", "60"]);
      await sleep(500);
      await move(d.id, "in_progress");
      await internal("POST", `/deployments/${d.id}/logs`, {
        lines: [{ message: "step one" }, { message: "warn", stream: "stderr", stack_id: stack.id }],
      });
      await sleep(300);
      await internal("POST", `/deployments/${d.id}/logs`, { lines: [{ message: "step two" }] });
      await move(d.id, final, final === "failed" ? "exit 1" : undefined);
      const r = await following;
      const lines = r.stdout.trimEnd().split("\n");
      check(
        r.code === code &&
          lines.at(-1) === `${d.id} ${final}` &&
          lines.filter((l) => / step one$/.test(l)).length === 1 &&
          lines.some((l) => l.endsWith(`[${stack.id}] ! warn`)) &&
          lines.some((l) => l.endsWith(" step two")),
        `follow prints each entry once and exits ${code} when it ${final}`,
        JSON.stringify(r),
      );
    }
  } else
    undocumented(
      "deployments follow",
      "the service does not document GET /v1/deployments/{id}/timeline yet (API_CONTRACT §19)",
    );

  // §18: a .env round trip and a dry run, when the service serves variable sets.
  if (
    serves("/v1/environments/{environment_id}/variables", "patch") &&
    serves("/v1/environments/{environment_id}/variables/export", "get")
  ) {
    const put = (name, value, type = "secret") =>
      fetch(`${base}/v1/environments/${envId}/variables`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ name, type, value }),
      });
    await put("DATABASE_URL", "postgres://u:p@db/app");
    await put("GREETING", 'say "hi"\nthen \\ leave');
    const versions = async () =>
      (
        await (
          await fetch(`${base}/v1/environments/${envId}/variables/versions`, {
            headers: { "x-api-key": key },
          })
        ).json()
      ).data.map((v) => v.version);
    const before = await versions();
    const exported = await cli(["variables", "export", "--environment", envId, "-o", "prod.env"]);
    const text = exported.code === 0 ? readFileSync(join(scratch, "prod.env"), "utf8") : "";
    check(
      exported.code === 0 && text.includes("DATABASE_URL=") && text.includes("GREETING="),
      "variables export writes the .env file",
      JSON.stringify(exported),
    );
    // The export imported back whole, as secrets: first as a dry run, then applied.
    const importExport = (...more) =>
      cli([
        "variables",
        "import",
        "prod.env",
        "--environment",
        envId,
        "--replace",
        "--type",
        "secret",
        ...more,
      ]);
    const dry = await importExport("--dry-run");
    check(
      dry.code === 0 && /dry run: no change/.test(dry.stdout),
      "a dry run of the export shows no change",
      JSON.stringify(dry),
    );
    writeFileSync(join(scratch, "edited.env"), `${text}NEW_ONE=fresh-value\n`);
    const preview = await cli(["variables", "import", "edited.env", "--environment", envId, "--dry-run"]);
    check(
      preview.code === 0 &&
        /^created\s+NEW_ONE\s+secret/m.test(preview.stdout) &&
        !preview.stdout.includes("fresh-value") &&
        !preview.stdout.includes("postgres://"),
      "a dry run prints the diff, never a value",
      JSON.stringify(preview),
    );
    const applied = await importExport();
    check(
      applied.code === 0 && /no change/.test(applied.stdout),
      "importing the export changes nothing",
      JSON.stringify(applied),
    );
    const reexported = await cli(["variables", "export", "--environment", envId]);
    check(
      reexported.stdout === text,
      "the .env round-trips unchanged",
      JSON.stringify([text, reexported.stdout]),
    );
    check(
      JSON.stringify(await versions()) === JSON.stringify(before),
      "the dry runs and the no-change import made no version",
      JSON.stringify(before),
    );
    const listedVersions = await cli(["variables", "versions", "--environment", envId, "--json"]);
    const shown =
      listedVersions.code === 0 ? JSON.parse(listedVersions.stdout).data.map((v) => v.version) : [];
    check(
      shown.length >= 2 && JSON.stringify(shown) === JSON.stringify(before),
      "variables versions lists the scope's versions, newest first",
      JSON.stringify(listedVersions),
    );
    const [newest] = shown;
    const oldest = shown.at(-1);
    const rewind = await cli(["variables", "restore", String(oldest), "--environment", envId, "--dry-run"]);
    const same = await cli(["variables", "restore", String(newest), "--environment", envId]);
    check(
      rewind.code === 0 &&
        new RegExp(`^dry run: would make version ${newest + 1}: `, "m").test(rewind.stdout) &&
        !rewind.stdout.includes("postgres://") &&
        same.code === 0 &&
        same.stdout === `no change (version ${newest})\n` &&
        JSON.stringify(await versions()) === JSON.stringify(before),
      "variables restore: a dry run shows the change, restoring the current version changes nothing",
      JSON.stringify([rewind, same]),
    );

    // A scope that mixes types: the file carries none, so its import retypes the `string` one. The
    // CLI says so, by name, before the change; a restore of the version before brings it back.
    await put("LOG_LEVEL", "info", "string");
    const [mixed] = await versions();
    const mixedText = (await cli(["variables", "export", "--environment", envId])).stdout;
    writeFileSync(join(scratch, "mixed.env"), mixedText);
    const retyped = await cli(["variables", "import", "mixed.env", "--environment", envId, "--replace"]);
    const typeOf = async (name) =>
      (
        await (
          await fetch(`${base}/v1/environments/${envId}/variables?limit=240`, {
            headers: { "x-api-key": key },
          })
        ).json()
      ).data.find((v) => v.name === name)?.type;
    const retypedAs = await typeOf("LOG_LEVEL");
    const restored = await cli(["variables", "restore", String(mixed), "--environment", envId]);
    check(
      retyped.code === 0 &&
        /^warning: .*this import changes the type of 1 variable: LOG_LEVEL \(string → secret\)/m.test(
          retyped.stderr,
        ) &&
        /^updated\s+LOG_LEVEL\s+string → secret/m.test(retyped.stdout) &&
        retypedAs === "secret" &&
        restored.code === 0 &&
        (await typeOf("LOG_LEVEL")) === "string",
      "an import over a string variable names it (string → secret) before it applies; a restore brings the type back",
      JSON.stringify([retyped, retypedAs, restored]),
    );
  } else
    undocumented(
      "variables export | import",
      "the service does not document PATCH {scope}/variables and its export yet (API_CONTRACT §18)",
    );

  // §20: redeploy.
  if (serves("/v1/deployments/{id}/redeploy", "post")) {
    const r = await cli(["deployments", "redeploy", failed.id, "--json"]);
    const made = r.code === 0 ? JSON.parse(r.stdout) : null;
    check(
      made?.status === "queued" && made.redeploy_of === failed.id,
      "redeploy makes a queued copy",
      JSON.stringify(r),
    );
  } else
    undocumented(
      "deployments redeploy",
      "the service does not document POST /v1/deployments/{id}/redeploy yet (API_CONTRACT §20)",
    );

  // §21: keys that make keys.
  if (serves("/v1/api-keys", "post")) {
    const created = await cli(["keys", "create", "--name", "ci", "--scope", "deployments:read", "--json"]);
    const made = created.code === 0 ? JSON.parse(created.stdout) : null;
    check(
      made?.key?.startsWith("dpk_") && made.scopes.join() === "deployments:read",
      "keys create makes a narrower key",
      JSON.stringify(created),
    );
    const narrow = await cli(["deployments", "list"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    const refused = await cli(["projects", "list"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    check(
      narrow.code === 0 && refused.code === 11,
      "the new key can do what it was given and no more",
      JSON.stringify([narrow, refused]),
    );
    const shownKey = await cli(["keys", "get", made?.id, "--json"]);
    check(
      shownKey.code === 0 &&
        JSON.parse(shownKey.stdout).id === made?.id &&
        !shownKey.stdout.includes(made?.key),
      "keys get shows the key's record, never the key",
      JSON.stringify(shownKey),
    );
    const listedKeys = await cli(["keys", "list", "--all", "--json"]);
    check(
      listedKeys.code === 0 && JSON.parse(listedKeys.stdout).data.some((k) => k.id === made?.id),
      "keys list shows it",
      JSON.stringify(listedKeys),
    );
    const revoked = await cli(["keys", "revoke", made?.id]);
    const after = await cli(["whoami"], { env: { DEPLOY_PLATFORM_API_KEY: made?.key } });
    check(
      revoked.code === 0 && after.code === 11,
      "keys revoke revokes it",
      JSON.stringify([revoked, after]),
    );
  } else
    undocumented(
      "keys create | list | revoke",
      "the service does not document POST /v1/api-keys yet (API_CONTRACT §21)",
    );
}
