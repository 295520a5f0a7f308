/** `deploy-platform limits` against a fake API on a real socket (API_CONTRACT §29). */
import { afterEach, describe, expect, it } from "vitest";
import { closeness } from "../src/cli/organization.js";
import { run } from "../src/cli/program.js";
import { fakeIo, json, startFake } from "./fake-api.js";

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

const LIMITS = {
  org_id: "Org1",
  limits: [
    { name: "projects", limit: 100, used: 100 },
    { name: "environments", limit: 1000, used: 850 },
    { name: "variables", limit: 20000, used: 12 },
    { name: "api_keys", limit: 1000, used: 3 },
    { name: "integrations", limit: 0, used: 0 },
    { name: "audit_streams", limit: 5, used: 7 },
    { name: "deployments_per_day", limit: 2000, used: 2, reset: 3600 },
  ],
};

describe("deploy-platform limits", () => {
  it("prints each limit with used/limit and how close it is, and names those at their limit", async () => {
    const server = await startFake((_req, res, url) => {
      if (url.pathname === "/v1/api-keys/current") return json(res, 200, { org_id: "Org1" });
      if (url.pathname === "/v1/orgs/Org1/limits") return json(res, 200, LIMITS);
      json(res, 404, { code: "not_found", message: "No." });
    });
    close = server.close;
    const t = fakeIo(server.base);
    expect(await run(["limits"], t.io, "0.0.0")).toBe(0);
    expect(t.stdout().split("\n")).toEqual([
      "NAME                 USED  LIMIT  USE           FREES IN",
      "projects             100   100    full",
      "environments         850   1000   85% (near)",
      "variables            12    20000  0%",
      "api_keys             3     1000   0%",
      "integrations         0     0      none allowed",
      "audit_streams        7     5      over (140%)",
      "deployments_per_day  2     2000   0%            3600s",
      "",
    ]);
    expect(t.stderr()).toBe(
      "at the limit: projects, integrations, audit_streams (a create is refused with 409 until one is freed)\n",
    );
    const asJson = fakeIo(server.base);
    expect(await run(["limits", "--json"], asJson.io, "0.0.0")).toBe(0);
    expect(JSON.parse(asJson.stdout())).toEqual(LIMITS);
  });

  it("closeness reads at a glance", () => {
    expect(closeness(0, 10)).toBe("0%");
    expect(closeness(8, 10)).toBe("80% (near)");
    expect(closeness(10, 10)).toBe("full");
    expect(closeness(11, 10)).toBe("over (110%)");
    expect(closeness(0, 0)).toBe("none allowed");
    expect(closeness(2, 0)).toBe("over");
  });
});
