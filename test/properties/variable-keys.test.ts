/** VARIABLES_KEY misconfigured or rotated: reveal, writes, and internalReencryptVariables. */

import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { variableKeyVersion } from "../../src/crypto/variables";
import { reencryptVariables } from "../../src/services/variables/reencrypt";
import { request } from "../helpers/api";
import { serviceContext } from "../helpers/context";
import type { ErrorBody } from "../helpers/expect";
import {
  callApp,
  componentPath,
  createVariable,
  environmentPath,
  type ListBody,
  randomKey,
  reveal,
  setup,
  type VariableBody,
} from "../helpers/variables";

describe("key configuration", () => {
  it.each([
    ["missing", ""],
    ["malformed", "not-base64!"],
    ["the wrong size", btoa("sixteen-byte-key")],
  ])(
    "a %s VARIABLES_KEY fails encrypted writes and reveals with 500 internal, loudly, never in plaintext",
    async (_, bad) => {
      const { owner, componentId } = await setup();
      const existing = await createVariable(owner, componentPath(componentId), { value: "sealed-value" });
      const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
      try {
        const broken = { VARIABLES_KEY: bad };
        for (const type of ["secret", "secure_string"]) {
          const create = await callApp(broken, "POST", componentPath(componentId), owner.key, {
            name: `NEW_${type}`,
            type,
            value: "would-be-plaintext",
          });
          expect(create.status).toBe(500);
          expect(JSON.parse(create.raw).code).toBe("internal");
          expect(create.raw).not.toContain("would-be-plaintext");
          const replace = await callApp(broken, "PUT", `/v1/variables/${existing.id}`, owner.key, {
            name: "CHANGED",
            type,
            value: "would-be-plaintext",
          });
          expect(replace.status).toBe(500);
        }
        const revealed = await callApp(broken, "GET", `/v1/variables/${existing.id}/value`, owner.key);
        expect(revealed.status).toBe(500);
        expect(JSON.parse(revealed.raw)).toEqual({ code: "internal", message: expect.any(String) });
        expect(revealed.raw).not.toContain("sealed-value");

        const logged = errors.mock.calls.map((args) => args.map(String).join(" "));
        expect(logged.some((line) => line.includes("VARIABLES_KEY"))).toBe(true);
        expect(logged.join("\n")).not.toContain("would-be-plaintext");
        expect(logged.join("\n")).not.toContain("sealed-value");

        // Plain `string` variables need no key and keep working.
        const plain = await callApp(broken, "POST", componentPath(componentId), owner.key, {
          name: "PLAIN",
          type: "string",
          value: "p",
        });
        expect(plain.status).toBe(201);
      } finally {
        errors.mockRestore();
      }
      // Nothing was written by the failed requests: the existing variable is unchanged and no NEW_* exists.
      const list = await request<ListBody>("GET", componentPath(componentId), { key: owner.key });
      expect(list.body.data.map((v) => v.name).sort()).toEqual([existing.name, "PLAIN"].sort());
      expect((await reveal(owner, existing.id)).body.value).toBe("sealed-value");
    },
  );

  it("rotation: rows under VARIABLES_KEY_PREVIOUS still reveal; writes move them to the new key", async () => {
    const { owner, environmentId } = await setup();
    const newKey = randomKey();
    const old = await createVariable(owner, environmentPath(environmentId), { value: "under-old-key" });
    const rotated = { VARIABLES_KEY: newKey, VARIABLES_KEY_PREVIOUS: env.VARIABLES_KEY };
    const read = await callApp(rotated, "GET", `/v1/variables/${old.id}/value`, owner.key);
    expect([read.status, JSON.parse(read.raw)]).toEqual([200, { value: "under-old-key" }]);

    const rewrite = await callApp(rotated, "PUT", `/v1/variables/${old.id}`, owner.key, {
      name: old.name,
      type: "secret",
      value: "under-new-key",
    });
    expect(rewrite.status).toBe(200);
    const row = await env.DB.prepare("SELECT key_version FROM variables WHERE id = ?").bind(old.id).first();
    expect(row?.key_version).toBe(await variableKeyVersion(newKey));
    const after = await callApp({ VARIABLES_KEY: newKey }, "GET", `/v1/variables/${old.id}/value`, owner.key);
    expect(JSON.parse(after.raw)).toEqual({ value: "under-new-key" });

    // Without the previous key, a row still under it fails loudly rather than leaking anything.
    const stale = await createVariable(owner, environmentPath(environmentId), { value: "stale" });
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const lost = await callApp(
        { VARIABLES_KEY: newKey },
        "GET",
        `/v1/variables/${stale.id}/value`,
        owner.key,
      );
      expect(lost.status).toBe(500);
      expect(errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")).toMatch(/key version/);
    } finally {
      errors.mockRestore();
    }
  });

  it("the rotation sweep moves rows from VARIABLES_KEY_PREVIOUS onto VARIABLES_KEY in batches", async () => {
    const { owner, environmentId, componentId } = await setup();
    const oldKey = randomKey();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const path = i % 2 ? componentPath(componentId) : environmentPath(environmentId);
      const res = await callApp({ VARIABLES_KEY: oldKey }, "POST", path, owner.key, {
        name: `R${i}`,
        type: i % 2 ? "secret" : "secure_string",
        value: `rotated-${i}`,
      });
      expect(res.status).toBe(201);
      ids.push((JSON.parse(res.raw) as VariableBody).id);
    }
    const before = await Promise.all(
      ids.map((id) => request("GET", `/v1/variables/${id}`, { key: owner.key })),
    );
    const rotated = serviceContext({ VARIABLES_KEY_PREVIOUS: oldKey }, "internal.reencryptVariables");
    const batches: number[] = [];
    for (let i = 0; i < 10; i++) {
      const step = await reencryptVariables(rotated, 2);
      expect(step.key_version).toBe(await variableKeyVersion(env.VARIABLES_KEY));
      expect(step.previous_key_version).toBe(await variableKeyVersion(oldKey));
      batches.push(step.reencrypted);
      if (!step.remaining) break;
    }
    // The five values, then the five their first versions keep for restores (./variable-history.test.ts).
    expect(batches).toEqual([2, 2, 2, 2, 2]);
    expect((await reencryptVariables(rotated, 2)).reencrypted).toBe(0);
    expect((await reencryptVariables(serviceContext(), 2)).reencrypted).toBe(0);
    const current = await variableKeyVersion(env.VARIABLES_KEY);
    for (const [i, id] of ids.entries()) {
      const row = await env.DB.prepare("SELECT key_version FROM variables WHERE id = ?").bind(id).first();
      expect(row?.key_version).toBe(current);
      // The worker's own key now opens every row: the previous key can be dropped.
      expect((await reveal(owner, id)).body).toEqual({ value: `rotated-${i}` });
      // Not a change to the variable: the record, updated_at included, is as before.
      expect((await request("GET", `/v1/variables/${id}`, { key: owner.key })).body).toEqual(before[i]?.body);
    }
  });

  it("a ciphertext copied onto another row does not decrypt there", async () => {
    const { owner, componentId } = await setup();
    const a = await createVariable(owner, componentPath(componentId), { value: "belongs-to-a" });
    const b = await createVariable(owner, componentPath(componentId), { value: "belongs-to-b" });
    await env.DB.prepare(
      "UPDATE variables SET value = (SELECT value FROM variables WHERE id = ?1), key_version = (SELECT key_version FROM variables WHERE id = ?1) WHERE id = ?2",
    )
      .bind(a.id, b.id)
      .run();
    const errors = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const res = await reveal(owner, b.id);
      expect([res.status, (res.body as unknown as ErrorBody).code]).toEqual([500, "internal"]);
      expect(res.raw).not.toContain("belongs-to");
      expect(errors.mock.calls.map((args) => args.map(String).join(" ")).join("\n")).toContain(b.id);
    } finally {
      errors.mockRestore();
    }
    expect((await reveal(owner, a.id)).body.value).toBe("belongs-to-a");
  });
});

describe("encryption at rest", () => {
  it("no row of the variables table holds a secret or secure_string plaintext", async () => {
    const { owner, environmentId, componentId } = await setup();
    const marker = `MARKER${crypto.randomUUID().replace(/-/g, "")}`;
    const ids: string[] = [];
    for (const type of ["secret", "secure_string"]) {
      ids.push((await createVariable(owner, componentPath(componentId), { type, value: marker })).id);
      ids.push(
        (await createVariable(owner, environmentPath(environmentId), { type, value: `${marker}-env` })).id,
      );
      // Replaced values too, and the old value of a replace must not linger.
      const replaced = await createVariable(owner, componentPath(componentId), {
        type,
        value: `${marker}-old`,
      });
      await request("PUT", `/v1/variables/${replaced.id}`, {
        key: owner.key,
        body: { name: replaced.name, type, value: `${marker}-new` },
      });
      ids.push(replaced.id);
    }
    const { results } = await env.DB.prepare("SELECT * FROM variables").all<Record<string, unknown>>();
    const ours = results.filter((r) => ids.includes(String(r.id)));
    expect(ours).toHaveLength(ids.length);
    const dump = JSON.stringify(results);
    expect(dump).not.toContain(marker);
    // Not merely encoded: no base64 form of the marker either.
    expect(dump).not.toContain(btoa(marker).slice(0, 16));
    const version = await variableKeyVersion(env.VARIABLES_KEY);
    for (const row of ours) {
      expect(row.key_version).toBe(version);
      expect(String(row.value)).toMatch(/^v1\.\d+\./);
    }
    for (const id of ids) expect((await reveal(owner, id)).body.value).toContain(marker);
  });

  it("a string value is stored as plaintext with no key version (the contract)", async () => {
    const { owner, environmentId } = await setup();
    const variable = await createVariable(owner, environmentPath(environmentId), {
      type: "string",
      value: "plain",
    });
    const row = await env.DB.prepare("SELECT value, key_version FROM variables WHERE id = ?")
      .bind(variable.id)
      .first();
    expect(row).toEqual({ value: "plain", key_version: null });
  });
});
