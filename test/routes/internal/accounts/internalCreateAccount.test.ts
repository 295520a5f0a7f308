/** internalCreateAccount: POST /internal/v1/accounts (API_CONTRACT §9). */
import { describe, expect, it } from "vitest";
import { internal } from "../../../helpers/api";
import { expectError, NEW_ID, TS } from "../../../helpers/expect";
import { unique } from "../../../helpers/factories";
import { runInternalRouteTests } from "../../../helpers/security";

const EMPTY_PROFILE = { bio: null, github: null, location: null, twitter: null, website: null };

describe("POST /internal/v1/accounts", () => {
  it("defaults display_name to name, avatar to null and every profile field to null", async () => {
    const res = await internal("POST", "/accounts", { name: "ada" });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(NEW_ID),
      name: "ada",
      display_name: "ada",
      avatar: null,
      profile: EMPTY_PROFILE,
      created_at: expect.stringMatching(TS),
    });
  });

  it("keeps what is given and fills the rest of the profile with null", async () => {
    const res = await internal("POST", "/accounts", {
      name: "grace",
      display_name: "Grace Hopper",
      avatar: "https://example.com/g.png",
      profile: { github: "grace", website: null },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: "grace",
      display_name: "Grace Hopper",
      avatar: "https://example.com/g.png",
      profile: { ...EMPTY_PROFILE, github: "grace" },
    });
    const nulls = await internal("POST", "/accounts", { name: "n", display_name: null, profile: null });
    expect(nulls.body).toMatchObject({ display_name: "n", profile: EMPTY_PROFILE });
  });

  it.each([
    [{}, "name"],
    [{ name: 5 }, "name"],
    [{ name: "a", profile: { shoe_size: 1 } }, "profile.shoe_size"],
    [{ name: "a", profile: { bio: 5 } }, "profile.bio"],
    [{ name: "a", email: "a@b.c" }, "email"],
  ])("refuses %j naming %s", async (body, path) => {
    expectError(await internal("POST", "/accounts", body), 400, "bad_input", path);
  });

  runInternalRouteTests("POST /internal/v1/accounts", async () => ({
    method: "POST",
    path: "/internal/v1/accounts",
    body: { name: unique("user") },
  }));
});
