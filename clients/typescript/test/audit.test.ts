/** `deploy-platform audit tail` and `audit streams …` against a fake API on a real socket (API_CONTRACT §30). */
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../src/cli/program.js";
import { fakeIo, json, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const entry = (sequence: number) => ({
  id: `E${sequence}`,
  sequence,
  org_id: "Org1",
  project_id: null,
  action: sequence % 2 ? "createProject" : "deleteProject",
  target: { type: "project", id: `P${sequence}` },
  actor: { type: "api_key", account_id: "Acc1", api_key_id: "Key1" },
  request_id: "r",
  ip: null,
  user_agent: null,
  changes: null,
  created_at: `2026-11-26T10:00:0${sequence % 10}.000Z`,
});

describe("deploy-platform audit tail", () => {
  it("prints the last n entries oldest first, then follows by after_sequence until stopped", async () => {
    // The log holds 1..5; a sixth and seventh arrive while it follows.
    let last = 5;
    const asked: string[] = [];
    const server = await startFake((_req, res, url) => {
      if (url.pathname === "/v1/api-keys/current") return json(res, 200, { org_id: "Org1" });
      if (url.pathname !== "/v1/orgs/Org1/audit-log")
        return json(res, 404, { code: "not_found", message: "No." });
      asked.push(url.search);
      const after = url.searchParams.get("after_sequence");
      if (after === null) {
        const limit = Number(url.searchParams.get("limit"));
        const newest = Array.from({ length: last }, (_, i) => entry(last - i)).slice(0, limit);
        return json(res, 200, { data: newest, has_more: false });
      }
      const from = Number(after);
      const data = Array.from({ length: Math.max(0, last - from) }, (_, i) => entry(from + 1 + i));
      if (last === 5) last = 7; // the next read finds two more
      return json(res, 200, { data, has_more: false });
    });
    close = server.close;
    const controller = new AbortController();
    const t = fakeIo(server.base);
    let reads = 0;
    t.io.signal = controller.signal;
    t.io.sleep = async () => {
      if (++reads === 2) controller.abort();
    };
    expect(await run(["audit", "tail", "-n", "2"], t.io, "0.0.0")).toBe(0);
    expect(
      t
        .stdout()
        .split("\n")
        .map((line) => line.split(" ")[0]),
    ).toEqual(["4", "5", "6", "7", ""]);
    expect(t.stdout().split("\n")[0]).toBe(
      "4 2026-11-26T10:00:04.000Z deleteProject project:P4 by account Acc1",
    );
    expect(asked[0]).toBe("?limit=2");
    // Nothing new at first; after a wait, the two that came.
    expect(asked.slice(1)).toEqual(["?after_sequence=5&limit=240", "?after_sequence=5&limit=240"]);

    const once = fakeIo(server.base);
    expect(await run(["audit", "tail", "--from", "6", "--no-follow", "--json"], once.io, "0.0.0")).toBe(0);
    expect(
      once
        .stdout()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).sequence),
    ).toEqual([7]);
    const bad = fakeIo(server.base);
    expect(await run(["audit", "tail", "--from", "-1"], bad.io, "0.0.0")).toBe(10);
  });
});

describe("deploy-platform audit tail -n", () => {
  it("reads the last n a page of 240 at a time; 0 prints none and follows from the newest; not a count is a usage error", async () => {
    // The log holds 1..500; the newest-first list pages by an offset cursor.
    const asked: string[] = [];
    const server = await startFake((_req, res, url) => {
      if (url.pathname === "/v1/api-keys/current") return json(res, 200, { org_id: "Org1" });
      asked.push(url.search);
      const after = url.searchParams.get("after_sequence");
      if (after !== null) return json(res, 200, { data: [], has_more: false });
      const limit = Number(url.searchParams.get("limit"));
      const offset = Number(url.searchParams.get("after") ?? 0);
      const data = Array.from({ length: Math.min(limit, 500 - offset) }, (_, i) => entry(500 - offset - i));
      const more = offset + data.length < 500;
      return json(res, 200, { data, has_more: more, ...(more ? { next_page: String(offset + limit) } : {}) });
    });
    close = server.close;
    const many = fakeIo(server.base);
    expect(await run(["audit", "tail", "-n", "300", "--no-follow", "--json"], many.io, "0.0.0")).toBe(0);
    const printed = many
      .stdout()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).sequence);
    expect(printed).toEqual(Array.from({ length: 300 }, (_, i) => 201 + i));
    expect(asked).toEqual(["?limit=240", "?limit=60&after=240", "?after_sequence=500&limit=240"]);

    asked.length = 0;
    const none = fakeIo(server.base);
    expect(await run(["audit", "tail", "-n", "0", "--no-follow"], none.io, "0.0.0")).toBe(0);
    expect(none.stdout()).toBe("");
    expect(asked).toEqual(["?limit=1", "?after_sequence=500&limit=240"]);

    // A server that answers an empty page with a next_page still: the tail stops reading.
    asked.length = 0;
    const endless = await startFake((_req, res, url) => {
      if (url.pathname === "/v1/api-keys/current") return json(res, 200, { org_id: "Org1" });
      asked.push(url.search);
      return json(res, 200, { data: [], has_more: true, next_page: "more" });
    });
    const stops = fakeIo(endless.base);
    expect(await run(["audit", "tail", "-n", "3", "--no-follow"], stops.io, "0.0.0")).toBe(0);
    await endless.close();
    expect(asked).toEqual(["?limit=3", "?after_sequence=0&limit=240"]);

    for (const n of ["-1", "1.5", "abc"]) {
      const bad = fakeIo(server.base);
      expect(await run(["audit", "tail", "-n", n], bad.io, "0.0.0"), n).toBe(10);
      expect(bad.stderr(), n).toContain("--lines must be");
    }
  });
});

describe("deploy-platform audit streams", () => {
  const stream = {
    id: "S1",
    org_id: "Org1",
    name: "SIEM",
    url: "https://siem.example.com/in",
    enabled: true,
    delivered_through: 41,
    pending: 2,
    last_error: { at: "2026-11-26T10:00:00.000Z", status_code: 503, message: "HTTP 503" },
    created_at: "2026-11-26T09:00:00.000Z",
    updated_at: "2026-11-26T09:00:00.000Z",
  };

  it("create shows the signing secret once; list, get, update, replay and delete call the API", async () => {
    const seen: { method: string; path: string; body: string }[] = [];
    const server = await startFake((req, res, url, body) => {
      seen.push({ method: req.method ?? "", path: url.pathname + url.search, body: body ?? "" });
      if (url.pathname === "/v1/api-keys/current") return json(res, 200, { org_id: "Org1" });
      if (req.method === "POST" && url.pathname === "/v1/orgs/Org1/audit-streams")
        return json(res, 201, { ...stream, signing_secret: "whsec_c2VjcmV0" });
      if (url.pathname === "/v1/orgs/Org1/audit-streams")
        return json(res, 200, { data: [stream], has_more: false });
      if (req.method === "DELETE") {
        res.writeHead(204);
        return res.end();
      }
      if (url.pathname === "/v1/audit-streams/S1/replay")
        return json(res, 202, { ...stream, delivered_through: 9 });
      return json(res, 200, stream);
    });
    close = server.close;
    const created = fakeIo(server.base);
    expect(
      await run(
        [
          "audit",
          "streams",
          "create",
          "--name",
          "SIEM",
          "--stream-url",
          stream.url,
          "--from-start",
          "--paused",
        ],
        created.io,
        "0.0.0",
      ),
    ).toBe(0);
    expect(created.stdout()).toContain("\nwhsec_c2VjcmV0\n");
    expect((created.stdout() + created.stderr()).split("whsec_c2VjcmV0")).toHaveLength(2);
    expect(created.stderr()).toContain("only time the signing secret is shown");
    const post = seen.find((s) => s.method === "POST");
    expect(JSON.parse(post?.body ?? "{}")).toEqual({
      name: "SIEM",
      url: stream.url,
      enabled: false,
      from: "start",
    });

    const listed = fakeIo(server.base);
    expect(await run(["audit", "streams", "list"], listed.io, "0.0.0")).toBe(0);
    expect(listed.stdout().split("\n")[1]).toBe("S1  SIEM  yes      41         2        HTTP 503");

    const got = fakeIo(server.base);
    expect(await run(["audit", "streams", "get", "S1"], got.io, "0.0.0")).toBe(0);
    expect(got.stdout()).toContain("pending:");

    const paused = fakeIo(server.base);
    expect(await run(["audit", "streams", "update", "S1", "--pause"], paused.io, "0.0.0")).toBe(0);
    expect(JSON.parse(seen.find((s) => s.method === "PATCH")?.body ?? "{}")).toEqual({ enabled: false });
    const nothing = fakeIo(server.base);
    expect(await run(["audit", "streams", "update", "S1"], nothing.io, "0.0.0")).toBe(10);

    const replayed = fakeIo(server.base);
    expect(await run(["audit", "streams", "replay", "S1", "--from", "10"], replayed.io, "0.0.0")).toBe(0);
    expect(JSON.parse(seen.filter((s) => s.path === "/v1/audit-streams/S1/replay")[0]?.body ?? "{}")).toEqual(
      {
        from_sequence: 10,
      },
    );
    // Not a sequence: said before anything is sent (yargs reads `abc` as NaN, JSON as null).
    for (const from of ["abc", "0", "2.5"]) {
      const bad = fakeIo(server.base);
      expect(await run(["audit", "streams", "replay", "S1", "--from", from], bad.io, "0.0.0"), from).toBe(10);
      expect(bad.stderr(), from).toContain("--from must be a sequence");
    }
    expect(seen.filter((s) => s.path === "/v1/audit-streams/S1/replay")).toHaveLength(1);

    const deleted = fakeIo(server.base);
    expect(await run(["audit", "streams", "delete", "S1"], deleted.io, "0.0.0")).toBe(0);
    expect(seen.at(-1)).toMatchObject({ method: "DELETE", path: "/v1/audit-streams/S1" });
  });
});
