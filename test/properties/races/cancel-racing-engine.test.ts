/** A cancel racing the engine's move of the same deployment (API_CONTRACT §17). */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { DeploymentRecord } from "../../../src/schemas/deployment";
import { request } from "../../helpers/api";
import { deploy, report } from "../../helpers/engine";
import type { ErrorBody } from "../../helpers/expect";
import { createProjectEnvironment, createStack } from "../../helpers/factories";

type Deployment = DeploymentRecord;

describe("cancel racing the engine (§17)", () => {
  it("a cancel racing queued → in_progress always cancels; 409 only once final", async () => {
    const { owner, environmentId } = await createProjectEnvironment();
    const stack = await createStack(environmentId);
    // Several races at once, the engine's move started 0–3 ms after the cancel, so the
    // engine's write lands between the cancel's read and its write in a good share of them
    // (on the code before the fix, about a quarter of these cancels answered 409).
    for (let round = 0; round < 5; round++) {
      const batch = await Promise.all(Array.from({ length: 8 }, () => deploy(environmentId, [stack.id])));
      await Promise.all(
        batch.map(async (d, i) => {
          const [cancel, engine] = await Promise.all([
            request<Deployment & ErrorBody>("PATCH", `/v1/deployments/${d.id}/cancel`, { key: owner.key }),
            new Promise((resolve) => setTimeout(resolve, i % 4)).then(() =>
              report(d.id, { status: "in_progress" }),
            ),
          ]);
          expect(cancel.status, cancel.raw).toBe(200);
          expect(cancel.body.status).toBe("cancelled");
          expect(cancel.body.data.stacks?.map((s) => s.status)).toEqual(["cancelled"]);
          // The engine either moved first (the cancel then went through after it) or found it cancelled.
          expect([200, 409]).toContain(engine.status);
          if (engine.status === 200) expect(cancel.body.started_at).toBe(engine.body.started_at);
          const row = await env.DB.prepare("SELECT status FROM deployments WHERE id = ?")
            .bind(d.id)
            .first<{ status: string }>();
          expect(row?.status).toBe("cancelled");
        }),
      );
    }
  });
});
