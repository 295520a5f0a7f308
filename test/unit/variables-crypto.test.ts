import { describe, expect, it } from "vitest";
import {
  decryptVariableValue,
  encryptVariableValue,
  VariableDecryptError,
  type VariableIdentity,
  VariableKeyConfigError,
  variableKeyVersion,
} from "../../src/crypto/variables";

const keyOf = (fill: number) => btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
const KEY_A = keyOf(1);
const KEY_B = keyOf(2);
const row: VariableIdentity = {
  id: "7Hq3VnT5m2WcXbQ9pLk4Rz",
  environmentId: "3kT9sQ2mN8vB4xC7zP1wHd",
  scope: "_",
};

async function roundTrip(plaintext: string): Promise<string> {
  const sealed = await encryptVariableValue({ current: KEY_A }, row, plaintext);
  return decryptVariableValue({ current: KEY_A }, row, sealed);
}

/** Flips one bit of the base64 part at `index` of the envelope (1 = version, 2 = IV, 3 = ciphertext). */
function flip(envelope: string, index: 2 | 3): string {
  const parts = envelope.split(".");
  const bytes = Uint8Array.from(atob(parts[index] as string), (ch) => ch.charCodeAt(0));
  bytes[0] = (bytes[0] as number) ^ 1;
  parts[index] = btoa(String.fromCharCode(...bytes));
  return parts.join(".");
}

describe("variable value encryption", () => {
  it.each([
    ["ascii", "postgres://user:pw@db/app"],
    ["empty", ""],
    ["multibyte", "€🚀 ünïcödé \u0000 nul"],
    ["max size", "é".repeat(32_768)],
  ])("round-trips a %s value", async (_, value) => {
    expect(await roundTrip(value)).toBe(value);
  });

  it("writes a fresh IV every time, so equal values never give equal envelopes", async () => {
    const a = await encryptVariableValue({ current: KEY_A }, row, "same");
    const b = await encryptVariableValue({ current: KEY_A }, row, "same");
    expect(a.envelope).not.toBe(b.envelope);
    expect(a.envelope.split(".")[2]).not.toBe(b.envelope.split(".")[2]);
    expect(a.envelope).toMatch(/^v1\.\d+\.[A-Za-z0-9+/=]{16}\.[A-Za-z0-9+/=]+$/);
    expect(a.envelope).not.toContain("same");
  });

  it("names its key: the version is the key's fingerprint, in the envelope and returned", async () => {
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "x");
    const version = await variableKeyVersion(KEY_A);
    expect(sealed.keyVersion).toBe(version);
    expect(sealed.envelope.split(".")[1]).toBe(String(version));
    expect(await variableKeyVersion(KEY_B)).not.toBe(version);
    // Deterministic: the same secret always gives the same version (a restarted isolate finds its rows).
    expect(await variableKeyVersion(` ${KEY_A}\n`)).toBe(version);
  });

  it("refuses a tampered ciphertext or IV", async () => {
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "secret value");
    for (const part of [2, 3] as const) {
      await expect(
        decryptVariableValue({ current: KEY_A }, row, { ...sealed, envelope: flip(sealed.envelope, part) }),
      ).rejects.toBeInstanceOf(VariableDecryptError);
    }
    const truncated = sealed.envelope.slice(0, -8);
    await expect(
      decryptVariableValue({ current: KEY_A }, row, { ...sealed, envelope: truncated }),
    ).rejects.toBeInstanceOf(VariableDecryptError);
  });

  it("refuses an envelope copied onto another row, another environment or another scope (AAD)", async () => {
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "bound");
    for (const other of [
      { ...row, id: "9Hq3VnT5m2WcXbQ9pLk4Rz" },
      { ...row, environmentId: "4kT9sQ2mN8vB4xC7zP1wHd" },
      { ...row, scope: "5kT9sQ2mN8vB4xC7zP1wHd" },
    ]) {
      await expect(decryptVariableValue({ current: KEY_A }, other, sealed)).rejects.toThrow(
        /does not authenticate/,
      );
    }
  });

  it("refuses a wrong key: a row under an unknown key version fails, never decrypts to garbage", async () => {
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "x");
    await expect(decryptVariableValue({ current: KEY_B }, row, sealed)).rejects.toThrow(/key version/);
    // A forged version pointing at the configured key still fails authentication.
    const versionB = await variableKeyVersion(KEY_B);
    const forged = sealed.envelope.replace(/^v1\.\d+\./, `v1.${versionB}.`);
    await expect(
      decryptVariableValue({ current: KEY_B }, row, { envelope: forged, keyVersion: versionB }),
    ).rejects.toThrow(/does not authenticate/);
  });

  it("refuses a row whose key_version column disagrees with its envelope", async () => {
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "x");
    await expect(
      decryptVariableValue({ current: KEY_A }, row, { ...sealed, keyVersion: sealed.keyVersion + 1 }),
    ).rejects.toThrow(/does not match/);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["not base64", "not a key!"],
    ["too short", btoa("short")],
    ["too long", btoa("x".repeat(33))],
    ["url-safe alphabet", keyOf(0xfb).replace(/\+/g, "-").replace(/\//g, "_")],
  ])("a %s VARIABLES_KEY is a configuration error for writes and reads", async (_, bad) => {
    await expect(encryptVariableValue({ current: bad }, row, "x")).rejects.toBeInstanceOf(
      VariableKeyConfigError,
    );
    const sealed = await encryptVariableValue({ current: KEY_A }, row, "x");
    await expect(decryptVariableValue({ current: bad }, row, sealed)).rejects.toBeInstanceOf(
      VariableKeyConfigError,
    );
  });

  it("the error names the setting but never contains the secret", async () => {
    const bad = btoa("sixteen-byte-key");
    const err = await encryptVariableValue({ current: bad }, row, "x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VariableKeyConfigError);
    expect((err as Error).message).toContain("VARIABLES_KEY");
    expect((err as Error).message).not.toContain(bad);
  });

  it("refuses things that are not envelopes", async () => {
    for (const envelope of [
      "plaintext",
      "v2.1.AAAA.AAAA",
      "v1.x.AAAA.AAAA",
      "v1.1.AAAA.AAAA",
      "v1.1..",
      "",
    ]) {
      await expect(
        decryptVariableValue({ current: KEY_A }, row, { envelope, keyVersion: null }),
      ).rejects.toBeInstanceOf(VariableDecryptError);
    }
  });

  describe("rotation", () => {
    it("reads rows under the previous key, writes under the current one", async () => {
      const old = await encryptVariableValue({ current: KEY_A }, row, "before rotation");
      const rotated = { current: KEY_B, previous: KEY_A };
      expect(await decryptVariableValue(rotated, row, old)).toBe("before rotation");
      const fresh = await encryptVariableValue(rotated, row, "after rotation");
      expect(fresh.keyVersion).toBe(await variableKeyVersion(KEY_B));
      expect(await decryptVariableValue({ current: KEY_B }, row, fresh)).toBe("after rotation");
      // Once the previous key is dropped, rows still under it fail loudly.
      await expect(decryptVariableValue({ current: KEY_B }, row, old)).rejects.toBeInstanceOf(
        VariableDecryptError,
      );
    });

    it("a malformed previous key only matters for rows that need it", async () => {
      const rotated = { current: KEY_B, previous: "broken" };
      const fresh = await encryptVariableValue(rotated, row, "new");
      expect(await decryptVariableValue(rotated, row, fresh)).toBe("new");
      const old = await encryptVariableValue({ current: KEY_A }, row, "old");
      await expect(decryptVariableValue(rotated, row, old)).rejects.toThrow(/VARIABLES_KEY_PREVIOUS/);
    });
  });
});
