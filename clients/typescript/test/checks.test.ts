/** `deploy-platform checks list | conclude` against a fake API on a real socket (API_CONTRACT §31). */
import { afterEach, describe, expect, it } from "vitest";
import { run } from "../src/cli/program.js";
import { deployment, fakeIo, json, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const gate = (states: Array<[string, string, string | null]>) => ({
  required_approvals: 0,
  approvals: 0,
  wait_until: null,
  blocked_by: states.every(([, s]) => s === "passed") ? [] : ["check"],
  checks: states.map(([name, state, reason]) => ({
    name,
    state,
    reason,
    details_url: state === "pending" ? null : "https://ci.example.com/1",
    summary: null,
    concluded_at: state === "pending" ? null : "2026-11-26T10:00:00.000Z",
  })),
});

describe("deploy-platform checks", () => {
  it("list prints each check and what the deployment waits on; conclude sends the conclusion", async () => {
    const bodies: string[] = [];
    const server = await startFake((req, res, url, body) => {
      if (req.method === "GET")
        return json(res, 200, {
          ...deployment("D1", "waiting"),
          gate: gate([
            ["e2e", "passed", null],
            ["soak", "failed", "timeout"],
            ["scan", "pending", null],
          ]),
        });
      bodies.push(body);
      if (url.pathname !== "/v1/deployments/D1/checks/scan")
        return json(res, 404, { code: "not_found", message: "No check." });
      json(res, 200, { ...deployment("D1", "queued"), gate: gate([["scan", "passed", null]]) });
    });
    close = server.close;
    const listed = fakeIo(server.base);
    expect(await run(["checks", "list", "D1"], listed.io, "0.0.0")).toBe(0);
    expect(listed.stdout().split("\n")).toEqual([
      "CHECK  STATE               CONCLUDED                 DETAILS",
      "e2e    passed              2026-11-26T10:00:00.000Z  https://ci.example.com/1",
      "soak   failed (timed out)  2026-11-26T10:00:00.000Z  https://ci.example.com/1",
      "scan   pending             -                         -",
      "",
    ]);
    expect(listed.stderr()).toBe("D1 waiting on check\n");

    const concluded = fakeIo(server.base);
    expect(
      await run(
        ["checks", "conclude", "D1", "scan", "--passed", "--details-url", "https://ci.example.com/2"],
        concluded.io,
        "0.0.0",
      ),
    ).toBe(0);
    expect(JSON.parse(bodies[0] ?? "{}")).toEqual({
      conclusion: "passed",
      details_url: "https://ci.example.com/2",
    });
    expect(concluded.stderr()).toBe("D1 queued\n");

    const unknown = fakeIo(server.base);
    expect(await run(["checks", "conclude", "D1", "lint", "--failed"], unknown.io, "0.0.0")).toBe(11);
    const unsaid = fakeIo(server.base);
    expect(await run(["checks", "conclude", "D1", "scan"], unsaid.io, "0.0.0")).toBe(10);
  });
});
