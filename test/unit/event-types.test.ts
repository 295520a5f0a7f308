/** The one table of event types: every list of types and flags is read from it. */
import { describe, expect, it } from "vitest";
import {
  EVENT_FLAG,
  EVENT_TYPE_TABLE,
  EVENT_TYPES,
  FLAG_DESCRIPTION,
  INTERNAL_EVENT_TYPES,
  isEventType,
  NOTIFICATION_FLAGS,
} from "../../src/db/event-types";

describe("event types", () => {
  it("are the seven of API_CONTRACT §8, each with its own flag, and §31's six gate events under an eighth", () => {
    const gates = [
      "deployment.waiting",
      "deployment.reviewed",
      "deployment.check_concluded",
      "deployment.released",
      "environment.locked",
      "environment.unlocked",
    ];
    expect([...EVENT_TYPES].sort()).toEqual(
      [
        "changelog.created",
        "deployment.failed",
        "deployment.in_progress",
        "deployment.succeeded",
        "promotion.created",
        "service.in_alarm",
        "service.ok",
        ...gates,
      ].sort(),
    );
    expect(NOTIFICATION_FLAGS).toEqual([
      "deployments_failed",
      "deployments_in_progress",
      "deployments_succeeded",
      "changelog",
      "promotions",
      "services_in_alarm",
      "services_ok",
      "deployment_gates",
    ]);
    for (const type of EVENT_TYPES) expect(EVENT_FLAG[type]).toBe(EVENT_TYPE_TABLE[type].flag);
    for (const type of gates) expect(EVENT_FLAG[type as keyof typeof EVENT_FLAG]).toBe("deployment_gates");
  });

  it("lets the internal API emit every type but the deployment ones", () => {
    expect([...INTERNAL_EVENT_TYPES].sort()).toEqual(
      ["changelog.created", "promotion.created", "service.in_alarm", "service.ok"].sort(),
    );
  });

  it("describes each flag by its event type", () => {
    expect(FLAG_DESCRIPTION.services_in_alarm).toBe("`service.in_alarm`: a service went into alarm.");
    for (const type of EVENT_TYPES) expect(FLAG_DESCRIPTION[EVENT_FLAG[type]]).toMatch(`\`${type}\`: `);
  });

  it("recognizes its own types only (no inherited keys)", () => {
    expect(isEventType("deployment.failed")).toBe(true);
    expect(isEventType("deployment.cancelled")).toBe(false);
    expect(isEventType("toString")).toBe(false);
  });
});
