/**
 * A stored answer is kept sealed under the API key that made its request (src/idempotency/
 * sealed.ts): an Idempotency-Key's replay (API_CONTRACT §11) still answers the first answer byte
 * for byte, a new key's `key` (§21, "shown only here") included, while the limiter object's
 * storage holds neither it nor the answer's JSON. Through the real Worker and RateLimiter object.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { anonymousClient } from "../../src/lib/ip-address";
import { freshClientIp, limiterOf, request } from "../helpers/api";
import type { ErrorBody } from "../helpers/expect";
import { type Caller, createOrgWithOwner, createProject, unique } from "../helpers/factories";
import { captureLogs } from "../helpers/logs";
import { exchange, trustAndToken } from "../helpers/oidc";

type NewKey = { id: string; key: string };
type Stored = { body: string | null; parts: string[] };

/** What the caller's limiter object keeps of `key`'s answer: its row's body and its parts' bytes. */
const stored = (caller: Caller, key: string) =>
  runInDurableObject(limiterOf(`key:${caller.keyId}`), (_instance, state): Stored => {
    const { sql } = state.storage;
    const row = sql.exec<{ body: string | null }>("SELECT body FROM idempotency WHERE key = ?", key).one();
    const parts = sql
      .exec<{ part: ArrayBuffer }>("SELECT part FROM idempotency_parts WHERE key = ? ORDER BY n", key)
      .toArray()
      .map(({ part }) => new TextDecoder().decode(part));
    return { body: row.body, parts };
  });

const setStoredBody = (caller: Caller, key: string, body: string) =>
  runInDurableObject(limiterOf(`key:${caller.keyId}`), (_instance, state) => {
    state.storage.sql.exec("UPDATE idempotency SET body = ? WHERE key = ?", body, key);
  });

const createKey = (caller: Caller, key: string, name = "ci") =>
  request<NewKey>("POST", "/v1/api-keys", {
    key: caller.key,
    body: { name },
    headers: { "idempotency-key": key },
  });

describe("stored answers are sealed", () => {
  const errors = captureLogs("error");
  const unopened = () => errors.lines().filter((line) => line.msg === "idempotency answer does not open");

  it("keeps a new key's secret only sealed, and replays it byte for byte", async () => {
    const { owner } = await createOrgWithOwner();
    const first = await createKey(owner, "seal-key");
    expect(first.status).toBe(201);
    expect(first.body.key).toMatch(/^dpk_/);

    const kept = await stored(owner, "seal-key");
    expect(kept.body).toMatch(/^sealed\.v1\.[A-Za-z0-9+/=]+\.[A-Za-z0-9+/=]+$/);
    expect(kept.body).not.toContain(first.body.key);
    expect(kept.body).not.toContain(first.body.id);

    const replay = await createKey(owner, "seal-key");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.raw).toBe(first.raw);
    // The key still works: it was made once, and the replay shows the one that was made.
    const current = await request<{ id: string }>("GET", "/v1/api-keys/current", { key: replay.body.key });
    expect(current.status).toBe(200);
    expect(current.body.id).toBe(first.body.id);
  });

  it("keeps a token exchange's key sealed under its token, in the client address's object", async () => {
    const { owner } = await createOrgWithOwner();
    const { trust, token } = await trustAndToken(owner);
    const ip = freshClientIp();
    const send = () =>
      exchange(trust.id, token, { headers: { "idempotency-key": "seal-exchange", "cf-connecting-ip": ip } });
    const first = await send();
    expect(first.status, first.raw).toBe(201);
    const kept = await runInDurableObject(limiterOf(`ip:${anonymousClient(ip)}`), (_instance, state) =>
      state.storage.sql
        .exec<{ key: string; body: string | null }>("SELECT key, body FROM idempotency")
        .toArray(),
    );
    // Under the token's hash, never the token; the body sealed, holding neither the key nor its id.
    expect(kept.map((row) => row.key)).toEqual([expect.stringMatching(/^[0-9a-f]{64} seal-exchange$/)]);
    expect(kept[0]?.body).toMatch(/^sealed\.v1\./);
    expect(kept[0]?.body).not.toContain(first.body.key);
    expect(kept[0]?.body).not.toContain(first.body.id);
    const replay = await send();
    expect([replay.status, replay.raw, replay.headers.get("idempotent-replayed")]).toEqual([
      201,
      first.raw,
      "true",
    ]);
  });

  it("seals a large answer kept in parts too", async () => {
    const { owner } = await createOrgWithOwner();
    const project = await createProject(owner);
    // A PATCH of 500 variables answers a body over the 64 KiB kept in an entry's row.
    const variables = Object.fromEntries(
      Array.from({ length: 500 }, (_, i) => [`V_${i}_${"N".repeat(120)}`, { value: "x", type: "string" }]),
    );
    const path = `/v1/environments/${project.default_environment_id}/variables`;
    const patch = () =>
      request("PATCH", path, {
        key: owner.key,
        body: { variables },
        headers: { "idempotency-key": "seal-large" },
      });
    const first = await patch();
    expect(first.status).toBe(200);
    expect(first.raw.length).toBeGreaterThan(64 * 1024);

    const kept = await stored(owner, "seal-large");
    expect(kept.body).toBeNull();
    const whole = kept.parts.join("");
    expect(whole).toMatch(/^sealed\.v1\./);
    expect(whole).not.toContain("V_0");

    const replay = await patch();
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.raw).toBe(first.raw);
  });

  it("answers a stored body that does not open with a 409, and executes nothing again", async () => {
    const { owner } = await createOrgWithOwner();
    const name = unique("p");
    const create = () =>
      request("POST", "/v1/projects", {
        key: owner.key,
        body: { name },
        headers: { "idempotency-key": "seal-bad" },
      });
    expect((await create()).status).toBe(201);
    const kept = (await stored(owner, "seal-bad")).body as string;
    // One bit of the ciphertext's first byte flipped (decoded, so no base64 padding hides it).
    const [iv, sealed] = kept.slice("sealed.v1.".length).split(".") as [string, string];
    const bytes = atob(sealed);
    const flipped = String.fromCharCode(bytes.charCodeAt(0) ^ 1) + bytes.slice(1);
    await setStoredBody(owner, "seal-bad", `sealed.v1.${iv}.${btoa(flipped)}`);

    const replay = await create();
    expect(replay.status).toBe(409);
    expect((replay.body as ErrorBody).cause).toEqual([
      { path: "header.idempotency-key", message: expect.any(String) },
    ]);
    const list = await request<{ data: { name: string }[] }>("GET", "/v1/projects?limit=100", {
      key: owner.key,
    });
    expect(list.body.data.filter((p) => p.name === name)).toHaveLength(1);
    expect(unopened()).toHaveLength(1);
  });

  it("answers a body stored before sealing as it is", async () => {
    const { owner } = await createOrgWithOwner();
    const first = await createKey(owner, "seal-plain");
    expect(first.status).toBe(201);
    await setStoredBody(owner, "seal-plain", first.raw);
    const replay = await createKey(owner, "seal-plain");
    expect(replay.status).toBe(201);
    expect(replay.raw).toBe(first.raw);
    expect(unopened()).toHaveLength(0);
  });

  it("does not open under another entry's key", async () => {
    const { owner } = await createOrgWithOwner();
    expect((await createKey(owner, "seal-a", "a")).status).toBe(201);
    expect((await createKey(owner, "seal-b", "b")).status).toBe(201);
    // Entry a's sealed body copied onto entry b: b's key and fingerprint are its authenticated data.
    await setStoredBody(owner, "seal-b", (await stored(owner, "seal-a")).body as string);
    const replay = await createKey(owner, "seal-b", "b");
    expect(replay.status).toBe(409);
    expect(unopened()).toHaveLength(1);
  });
});
