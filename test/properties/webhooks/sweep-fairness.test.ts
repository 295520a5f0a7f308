/**
 * The cron's sweep of deliveries left pending (src/services/integrations/sweep.ts) takes at most
 * SWEEP_INTEGRATIONS integrations a run, from a random integration on, wrapping around: with more
 * than that many stuck, the ones late in id order are not left behind the same first ones at every
 * run (those of a backlogged tenant, whose lanes are late rather than stuck, would hold them).
 */
import { describe, expect, it } from "vitest";
import { SWEEP_INTEGRATIONS, sweepStuckDeliveries } from "../../../src/services/integrations/sweep";
import { serviceContext } from "../../helpers/context";
import { createOwnedProject, unique } from "../../helpers/factories";
import {
  allowTheLocalReceiver,
  deliveryRow,
  eventually,
  hook,
  integrate,
  writeDelivery,
  writeEvent,
} from "../../helpers/webhooks";

allowTheLocalReceiver();

describe("the stuck-delivery sweep", () => {
  it("with more integrations stuck than a run takes, it starts where it is told and wraps around: the last in id order is reached", async () => {
    const { project } = await createOwnedProject();
    const bucket = unique("sweep");
    const integrations = [];
    for (let i = 0; i <= SWEEP_INTEGRATIONS; i++) {
      integrations.push(await integrate(project.id, hook(bucket), { changelog: true }));
    }
    const event = await writeEvent(project.id, "changelog.created");
    const due = new Date(Date.now() - 10 * 60_000).toISOString();
    const deliveries = new Map<string, string>();
    for (const integration of integrations) {
      deliveries.set(
        integration.id,
        await writeDelivery(project.id, event.id, integration.id, { nextAttemptAt: due }),
      );
    }
    const last = integrations
      .map((i) => i.id)
      .sort()
      .at(-1) as string;
    // Started at the last one in id order: it, then the first ones, up to a run's worth.
    const swept = await sweepStuckDeliveries(serviceContext(), Date.now(), last);
    expect(swept.integrations).toBe(SWEEP_INTEGRATIONS);
    await eventually(async () =>
      expect((await deliveryRow(deliveries.get(last) as string))?.status).toBe("succeeded"),
    );
  });
});
