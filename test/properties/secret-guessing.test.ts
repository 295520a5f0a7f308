/**
 * No guessing a secret by writing it (API_CONTRACT §28). A key with `variables:write` but without
 * `variables:reveal` sends the value a `secret` or `secure_string` variable holds, as a guess, in
 * every write that compares values: a §18 change and its dry run, a §3 replace, a §18 restore and
 * its dry run. Each answers as for a wrong guess (`updated`, `value_changed: true`, a new version);
 * the same requests from a key that may reveal the value still compare.
 */
import { describe, expect, it } from "vitest";
import type { VariableChangeResult } from "../../src/schemas/variable-set";
import { request } from "../helpers/api";
import { rowsOf } from "../helpers/audit-log";
import { type Caller, createApiKey } from "../helpers/factories";
import {
  applied,
  applyChanges,
  getVersion,
  restore,
  setsWorld,
  versionNumbers,
} from "../helpers/variable-sets";
import { type ListBody, reveal, type VariableBody } from "../helpers/variables";

const STATE = {
  TOKEN: { type: "secret", value: "s3cret" },
  CERT: { type: "secure_string", value: "cert-1" },
  LEVEL: { type: "string", value: "debug" },
};

/**
 * A scope at version 1 holding `STATE` (written by its org owner), and two more keys of the owner's
 * account: `blind` (`variables:read` and `variables:write`, not `variables:reveal`) and `seeing`
 * (the same and `variables:reveal`).
 */
async function world() {
  const w = await setsWorld();
  const base = w.paths.environment;
  await applied(w.owner, base, { variables: STATE });
  const scopes = ["variables:read", "variables:write"];
  const blind = await createApiKey(w.owner, { scopes });
  const seeing = await createApiKey(w.owner, { scopes: [...scopes, "variables:reveal"] });
  return { ...w, base, blind, seeing };
}

const change = (name: string, from: string, to: string, valueChanged: boolean) => ({
  name,
  action: valueChanged || from !== to ? "updated" : "unchanged",
  type: { from, to },
  value_changed: valueChanged,
});

const idOf = async (caller: Caller, base: string, name: string) => {
  const list = await request<ListBody>("GET", base, { key: caller.key });
  const found = list.body.data.find((v) => v.name === name);
  if (!found) throw new Error(`no ${name}`);
  return found.id;
};

describe("a change (§18) by a key without variables:reveal", () => {
  it("counts every value given for a sealed name as changed, dry run or not; a string name still compares", async () => {
    const { owner, base, blind, seeing } = await world();
    // The stored values as guesses, and the same values under another type (sealed before or after).
    const guesses = {
      variables: {
        TOKEN: STATE.TOKEN,
        CERT: STATE.CERT,
        LEVEL: STATE.LEVEL,
        MOVED_IN: { type: "secret", value: "x" },
      },
    };
    await applied(owner, base, { variables: { MOVED_IN: { type: "string", value: "x" } } });
    const retype = {
      variables: { TOKEN: { type: "string", value: "s3cret" }, MOVED_IN: { type: "secret", value: "x" } },
    };

    const dry = await applyChanges(blind, base, { ...guesses, dry_run: true });
    expect(dry.status, dry.raw).toBe(200);
    expect(dry.body).toEqual({
      version: 3,
      dry_run: true,
      changes: [
        change("CERT", "secure_string", "secure_string", true),
        change("LEVEL", "string", "string", false),
        change("MOVED_IN", "string", "secret", true),
        change("TOKEN", "secret", "secret", true),
      ],
    });
    // A wrong guess answers exactly the same.
    const wrong = await applyChanges(blind, base, {
      variables: { ...guesses.variables, TOKEN: { type: "secret", value: "not-it" } },
      dry_run: true,
    });
    expect(wrong.body).toEqual(dry.body);
    const retyped = await applyChanges(blind, base, { ...retype, dry_run: true });
    expect(retyped.body.changes).toEqual([
      change("MOVED_IN", "string", "secret", true),
      change("TOKEN", "secret", "string", true),
    ]);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);

    // A key that may reveal the values compares them, as before.
    const compared = await applyChanges(seeing, base, { ...guesses, dry_run: true });
    expect(compared.body).toEqual({
      version: 3,
      dry_run: true,
      changes: [
        change("CERT", "secure_string", "secure_string", false),
        change("LEVEL", "string", "string", false),
        change("MOVED_IN", "string", "secret", false),
        change("TOKEN", "secret", "secret", false),
      ],
    });
    const unchanged = await applyChanges(seeing, base, {
      variables: { TOKEN: STATE.TOKEN, CERT: STATE.CERT },
      dry_run: true,
    });
    expect(unchanged.body).toEqual({
      version: 2,
      dry_run: true,
      changes: [
        change("CERT", "secure_string", "secure_string", false),
        change("TOKEN", "secret", "secret", false),
      ],
    });

    // Not a dry run: a new version, recorded as a change of the value, with its audit entry.
    const requestId = `guess-${crypto.randomUUID()}`;
    const made = await request<VariableChangeResult>("PATCH", base, {
      key: blind.key,
      body: { variables: { TOKEN: STATE.TOKEN, LEVEL: STATE.LEVEL } },
      headers: { "x-request-id": requestId },
    });
    expect(made.status, made.raw).toBe(200);
    expect(made.body).toEqual({
      version: 3,
      dry_run: false,
      changes: [change("LEVEL", "string", "string", false), change("TOKEN", "secret", "secret", true)],
    });
    const version = await getVersion(owner, base, 3);
    expect(version.body.changes).toEqual([change("TOKEN", "secret", "secret", true)]);
    const [entry, ...more] = await rowsOf(requestId);
    expect(more).toEqual([]);
    expect(JSON.parse(entry?.changes as string)).toEqual({ TOKEN: { from: "secret", to: "secret" } });
    expect((await reveal(owner, await idOf(owner, base, "TOKEN"))).body.value).toBe("s3cret");

    // The same change from the key that may reveal: nothing changes, no version.
    const same = await applyChanges(seeing, base, { variables: { TOKEN: STATE.TOKEN } });
    expect(same.body).toEqual({
      version: 3,
      dry_run: false,
      changes: [change("TOKEN", "secret", "secret", false)],
    });
    expect(await versionNumbers(owner, base)).toEqual([1, 2, 3]);
  });
});

describe("a replace (§3) by a key without variables:reveal", () => {
  it("of a sealed variable with its own value makes a new version that changes the value", async () => {
    const { owner, base, blind, seeing } = await world();
    const id = await idOf(owner, base, "TOKEN");
    const put = (caller: Caller, requestId: string) =>
      request<VariableBody>("PUT", `/v1/variables/${id}`, {
        key: caller.key,
        body: { name: "TOKEN", ...STATE.TOKEN },
        headers: { "x-request-id": requestId },
      });
    const blindId = `guess-${crypto.randomUUID()}`;
    const replaced = await put(blind, blindId);
    expect(replaced.status, replaced.raw).toBe(200);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
    const version = await getVersion(owner, base, 2);
    expect(version.body).toMatchObject({
      actor: { api_key_id: blind.keyId },
      request_id: blindId,
      changes: [change("TOKEN", "secret", "secret", true)],
    });
    const [entry] = await rowsOf(blindId);
    expect(entry).toMatchObject({ action: "replaceVariable", target_id: id, actor_api_key_id: blind.keyId });
    expect((await reveal(owner, id)).body.value).toBe("s3cret");

    // A key that may reveal the value: the same replace makes no version, as before.
    expect((await put(seeing, `seen-${crypto.randomUUID()}`)).status).toBe(200);
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
  });
});

describe("a restore (§18) by a key without variables:reveal", () => {
  it("counts every sealed name of the version as changed, dry run or not", async () => {
    const { owner, base, blind, seeing } = await world();
    // The scope holds exactly version 1: a restore of it changes nothing, for whoever compares.
    const expected = [
      change("CERT", "secure_string", "secure_string", true),
      change("LEVEL", "string", "string", false),
      change("TOKEN", "secret", "secret", true),
    ];
    const dry = await restore(blind, base, 1, { dry_run: true });
    expect(dry.status, dry.raw).toBe(200);
    expect(dry.body).toEqual({ version: 2, dry_run: true, changes: expected });
    const compared = await restore(seeing, base, 1, { dry_run: true });
    expect(compared.body).toEqual({
      version: 1,
      dry_run: true,
      changes: expected.map((c) => ({ ...c, action: "unchanged", value_changed: false })),
    });
    expect(await versionNumbers(owner, base)).toEqual([1]);

    const made = await restore(blind, base, 1);
    expect(made.body).toEqual({ version: 2, dry_run: false, changes: expected });
    expect((await getVersion(owner, base, 2)).body.changes).toEqual(expected.filter((c) => c.value_changed));
    expect((await reveal(owner, await idOf(owner, base, "TOKEN"))).body.value).toBe("s3cret");
    expect((await restore(seeing, base, 2)).body).toMatchObject({ version: 2 });
    expect(await versionNumbers(owner, base)).toEqual([1, 2]);
  });

  it("a name sealed now but not in the version counts as changed too", async () => {
    const { owner, base, blind, seeing } = await world();
    // Version 2: LEVEL sealed, with the value it held in clear at version 1.
    await applied(owner, base, { variables: { LEVEL: { type: "secret", value: "debug" } } });
    const dry = await restore(blind, base, 1, { dry_run: true });
    expect(dry.body.changes).toContainEqual(change("LEVEL", "secret", "string", true));
    const compared = await restore(seeing, base, 1, { dry_run: true });
    expect(compared.body.changes).toContainEqual(change("LEVEL", "secret", "string", false));
  });
});
