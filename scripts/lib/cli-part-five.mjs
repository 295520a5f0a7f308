// Part five from the CLI (`npm run check:cli`, scripts/check-cli.mjs), on the real server: the
// limits (API_CONTRACT §29), an audit stream's life and the log's tail (§30), a deployment's
// checks (§31). Each case fails if /openapi.json does not document the operation it calls.

/**
 * `cli` runs the installed `deploy-platform` bin with the demo key; `json` reads a run's JSON
 * output; `internal` calls the internal API; `environment` is one of the demo organization's
 * environments, which gains a check.
 */
export async function partFiveChecks({
  cli,
  json,
  check,
  undocumented,
  serves,
  base,
  key,
  internal,
  environment,
}) {
  const fifth = [
    ["/v1/orgs/{org_id}/limits", "get"],
    ["/v1/orgs/{org_id}/audit-streams", "post"],
    ["/v1/audit-streams/{id}/replay", "post"],
    ["/v1/orgs/{org_id}/audit-log", "get"],
    ["/v1/deployments/{id}/checks/{name}", "post"],
  ].filter(([path, method]) => !serves(path, method));
  if (fifth.length > 0) undocumented("limits, audit streams and checks from the CLI", JSON.stringify(fifth));
  else {
    const [limits, limitsTable] = await Promise.all([cli(["limits", "--json"]), cli(["limits"])]);
    const record = json(limits);
    check(
      record?.limits?.map((l) => l.name).join() ===
        "projects,environments,variables,api_keys,integrations,audit_streams,deployments_per_day" &&
        record.limits[0].used >= 1 &&
        /^NAME\s+USED\s+LIMIT/.test(limitsTable.stdout),
      "limits prints the organization's limits, in the contract's order, as JSON and as a table",
      JSON.stringify([limits, limitsTable]),
    );
    const created = await cli([
      "audit",
      "streams",
      "create",
      "--name",
      "cli-siem",
      "--stream-url",
      "http://127.0.0.1:9/siem",
      "--paused",
    ]);
    const streamId = /^stream:\s+(\S+)/m.exec(created.stdout)?.[1];
    const listedStreams = json(await cli(["audit", "streams", "list", "--json"]));
    const renamedStream = json(
      await cli(["audit", "streams", "update", streamId, "--name", "cli-siem-2", "--json"]),
    );
    const replayed = json(await cli(["audit", "streams", "replay", streamId, "--from", "1", "--json"]));
    const nothing = await cli(["audit", "streams", "update", streamId]);
    const removed = await cli(["audit", "streams", "delete", streamId]);
    // Shown once: not in what list and update answer afterwards.
    const secret = /\n(whsec_[A-Za-z0-9+/]{43}=)\n$/.exec(created.stdout)?.[1];
    check(
      created.code === 0 &&
        secret !== undefined &&
        !JSON.stringify([listedStreams, renamedStream]).includes(secret.slice("whsec_".length)) &&
        listedStreams?.data?.some((x) => x.id === streamId && x.enabled === false) &&
        renamedStream?.name === "cli-siem-2" &&
        replayed?.delivered_through === 0 &&
        nothing.code === 10 &&
        /--stream-url/.test(nothing.stderr) &&
        removed.code === 0,
      "audit streams create (its secret shown once), list, update, replay, delete",
      JSON.stringify([created, listedStreams, renamedStream, replayed, nothing, removed]),
    );
    const tail = await cli(["audit", "tail", "--no-follow", "-n", "3", "--json"]);
    const tailed = tail.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    check(
      tail.code === 0 &&
        tailed.length === 3 &&
        tailed[1].sequence === tailed[0].sequence + 1 &&
        tailed[2].sequence === tailed[1].sequence + 1 &&
        tailed.at(-1).action === "deleteAuditStream",
      "audit tail --no-follow prints the last entries in sequence order, the stream's deletion last",
      JSON.stringify(tail),
    );
    // A check on the production environment, set through the API (the CLI's `protection set` sets
    // §26's settings); a deployment the engine creates there waits for it.
    const protectionSet = await fetch(`${base}/v1/environments/${environment}/protection`, {
      method: "PUT",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        required_approvals: 0,
        reviewer_role: "owner",
        prevent_self_review: false,
        wait_timer: 0,
        concurrency: "parallel",
        checks: [{ name: "e2e", timeout: 600, on_timeout: "fail" }],
      }),
    });
    if (!protectionSet.ok)
      throw new Error(`PUT protection: ${protectionSet.status} ${await protectionSet.text()}`);
    const gatedStack = await internal("POST", `/environments/${environment}/stacks`, { name: "gated" });
    const gated = await internal("POST", `/environments/${environment}/deployments`, {
      stack_ids: [gatedStack.id],
      data: { patch: [] },
    });
    const pending = json(await cli(["checks", "list", gated.id, "--json"]));
    const concluded = json(
      await cli(["checks", "conclude", gated.id, "e2e", "--passed", "--summary", "412 green", "--json"]),
    );
    const twiceConcluded = await cli(["checks", "conclude", gated.id, "e2e", "--failed"]);
    check(
      gated.status === "waiting" &&
        pending?.[0]?.name === "e2e" &&
        pending[0].state === "pending" &&
        concluded?.status === "queued" &&
        concluded.gate.checks[0].state === "passed" &&
        concluded.gate.checks[0].summary === "412 green" &&
        twiceConcluded.code === 11 &&
        /^error: conflict: /m.test(twiceConcluded.stderr),
      "checks list, and conclude --passed releases the deployment; a second conclusion exits 11 (conflict)",
      JSON.stringify([gated, pending, concluded, twiceConcluded]),
    );
  }
}
